import { Link } from 'react-router';
import type { Rule } from '../api/types';
import { EscalationsTable } from '../escalations/EscalationsTable';
import { useEscalations } from '../escalations/queries';
import { PagedList } from '../ui/PagedList';
import { EmptyState } from '../ui/states';

export function RuleEscalations({ rule }: { rule: Rule }) {
  const escalations = useEscalations({ ruleId: rule.id }, 20);
  return (
    <section className="panel">
      <h2>
        Escalations <Link to={`/escalations?rule=${rule.id}&state=any`} className="h2-link">all</Link>
      </h2>
      <PagedList query={escalations} what="escalations" empty={<EmptyState title="No escalations">{whyNoEscalation(rule)}</EmptyState>}>
        {(items) => <EscalationsTable escalations={items} showRule={false} />}
      </PagedList>
    </section>
  );
}

function whyNoEscalation(rule: Rule): string {
  if (!rule.actionLimit) return 'This rule has no action limit, so it never escalates.';
  if (rule.actionLimit.onLimit === 'drop') return 'This rule drops the alarms past its limit (outcome limited) and tells nobody.';
  return 'When a host reaches the action limit, the alarms that cannot act are escalated to a person, once per host and window, and listed here.';
}
