import { CompiledQuery } from 'kysely';
import type { LedgerOutbox } from '../executions/ledger.js';
import type { Dialect } from '../store/database.js';
import type { Statements } from '../store/statements.js';

/**
 * The execution ledger's transaction that ends an execution `succeeded` also records, on the
 * incident of its event, that a pitcrew fix ended then (`last_fix_at`): the incident's resolution
 * within the tenant's automation window after it is automation's (book.ts). A diagnostics script
 * and a runbook e-mailed to on-call fix nothing and are left out. No statement for a batch that
 * ended nothing well.
 */
export function incidentFixes(statements: Statements, dialect: Dialect): LedgerOutbox {
  // The spec's flavour (a script's, executions/repository.ts ExecutionSpec) or kind (a run by the service's).
  const field = (name: string) => (dialect === 'postgres' ? `coalesce("executions"."spec"::jsonb ->> '${name}', '')` : `coalesce(json_extract("executions"."spec", '$.${name}'), '')`);
  return {
    writes: (transitions, now) => {
      const succeeded = transitions.filter((t) => t.to_state === 'succeeded').map((t) => t.execution_id);
      return statements.inLists(succeeded, 1).map((ids) => CompiledQuery.raw(
        `update "incidents" set "last_fix_at" = ${statements.list(1)} where "id" in (`
        + 'select "events"."incident_id" from "executions" join "events" on "events"."id" = "executions"."event_id" '
        + `where "executions"."id" in (${statements.list(ids.length, 1)}) and "events"."incident_id" is not null and ${field('flavour')} <> 'diagnostics' and ${field('kind')} <> 'email_runbook')`,
        [now, ...ids],
      ));
    },
    written: () => undefined,
  };
}
