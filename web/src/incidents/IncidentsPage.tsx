import { lazy, Suspense } from 'react';
import { PageHeader } from '../ui/PageHeader';
import { Loading } from '../ui/states';
import { CandidatesSection } from './CandidatesSection';
import { OpenIncidents } from './OpenIncidents';

// The charts and uPlot come after the open incidents, in a chunk of their own.
const AnalyticsSection = lazy(() => import('./AnalyticsSection'));

/** The incident dashboard (issue 38.3): what is open now and what pitcrew does about it, then where automation pays off. */
export default function IncidentsPage() {
  return (
    <>
      <PageHeader title="Incidents" subtitle="Open incidents live, newest first; troubleshoot or fix one at once. Below, the resolved ones in numbers, and the alarms worth automating." />
      <OpenIncidents />
      <CandidatesSection />
      <Suspense fallback={<Loading what="the analytics" />}>
        <AnalyticsSection />
      </Suspense>
    </>
  );
}
