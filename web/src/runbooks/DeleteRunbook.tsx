import { useNavigate } from 'react-router';
import type { RunbookView } from '../api/runbook-types';
import { ConfirmedAction } from '../ui/ConfirmedAction';
import { useDeleteRunbook } from './queries';

/** Deletes a runbook and every version of it; the service refuses, naming them, while rules use it. */
export function DeleteRunbook({ runbook }: { runbook: Pick<RunbookView, 'id' | 'name' | 'version'> }) {
  const remove = useDeleteRunbook();
  const navigate = useNavigate();
  return (
    <ConfirmedAction
      label="Delete"
      buttonClassName="button button-danger-quiet"
      title={`Delete “${runbook.name}”?`}
      confirmLabel="Delete runbook"
      mutation={remove}
      onConfirm={() => remove.mutate(runbook.id, { onSuccess: () => void navigate('/runbooks', { replace: true }) })}
    >
      <p>
        <strong>
          All {runbook.version} {runbook.version === 1 ? 'version is' : 'versions are'} gone for good.
        </strong>{' '}
        The service refuses while a rule runs it: point those rules at another runbook, or delete them, first.
      </p>
    </ConfirmedAction>
  );
}
