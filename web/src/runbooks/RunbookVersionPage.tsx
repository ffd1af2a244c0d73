import { Link, useParams } from 'react-router';
import type { RunbookVersionView, RunbookView } from '../api/runbook-types';
import { PageHeader } from '../ui/PageHeader';
import { Loadable } from '../ui/states';
import { useRunbook, useRunbookVersion } from './queries';
import { RunbookContent } from './RunbookContent';
import { diffPath } from './RunbookVersions';

/** /runbooks/:id/versions/:version: one version as it was saved, whatever came after. */
export default function RunbookVersionPage() {
  const { id = '', version = '' } = useParams();
  const runbook = useRunbook(id);
  const one = useRunbookVersion(id, Number(version));
  return (
    <Loadable query={runbook} what="the runbook">
      {(latest) => <Loadable query={one} what={`version ${version}`}>{(data) => <VersionView latest={latest} version={data} />}</Loadable>}
    </Loadable>
  );
}

function VersionView({ latest, version }: { latest: RunbookView; version: RunbookVersionView }) {
  const isLatest = version.version === latest.version;
  return (
    <>
      <PageHeader
        title={`${version.name} · version ${version.version}`}
        subtitle={
          <>
            <Link to={`/runbooks/${latest.id}`}>{latest.name}</Link> · {isLatest ? 'the latest version' : `an earlier version; the latest is ${latest.version}`}
          </>
        }
        actions={
          isLatest ? null : (
            <Link to={diffPath(latest.id, version.version, latest.version)} className="button">
              Compare with the latest
            </Link>
          )
        }
      />
      {isLatest ? null : (
        <p className="banner banner-info" role="status">
          <span>
            Rules that follow the latest run version {latest.version}; a rule pinned to version {version.version} runs this one.
          </span>
        </p>
      )}
      <RunbookContent content={{ ...version, savedAt: version.createdAt }} />
    </>
  );
}
