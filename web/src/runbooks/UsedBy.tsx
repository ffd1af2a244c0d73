import { Link } from 'react-router';
import { useRulesUsingRunbook } from './queries';

/** The rules that run the runbook, each linked, and whether each follows the latest or pins a version. */
export function UsedBy({ runbookId }: { runbookId: string }) {
  const rules = useRulesUsingRunbook(runbookId);
  if (!rules.data) return <span className="muted">…</span>;
  if (rules.data.length === 0) return <span className="muted">no rule yet</span>;
  return (
    <span data-used-by>
      {rules.data.map((rule, i) => {
        const runbook = 'runbook' in rule.action ? rule.action.runbook : undefined;
        const version = runbook && 'runbookId' in runbook && runbook.version !== undefined ? `pinned to ${runbook.version}` : 'the latest';
        return (
          <span key={rule.id}>
            {i > 0 ? ', ' : ''}
            <Link to={`/rules/${rule.id}`}>{rule.name}</Link> <span className="muted">({version})</span>
          </span>
        );
      })}
    </span>
  );
}
