import type { RunbookRecord } from '../executions/repository.js';
import type { RunbookRef } from '../rules/schema.js';
import { DEFAULT_INTERPRETER, type Interpreter } from '../runbooks/schema.js';
import { scriptSha256 } from '../runbooks/repository.js';

/** What a script or CLI execution copies of its rule's runbook when the event arrives. */
export interface RunbookCopy {
  interpreter: Interpreter;
  /** Absent for a git file: read before dispatch (executions/runbook-stage.ts). */
  script?: string;
  runbook: RunbookRecord;
}

/** The runbook a rule stores (rules/runbook-refs.ts), as one execution records it. */
export function runbookCopy(runbook: RunbookRef): RunbookCopy {
  const interpreter = runbook.interpreter ?? DEFAULT_INTERPRETER;
  if (runbook.repositoryId !== undefined) {
    const { repositoryId, path, ref } = runbook;
    return { interpreter, runbook: { repositoryId, path, ...(ref === undefined ? {} : { ref }) } };
  }
  const script = runbook.script!;
  // Rules saved before runbooks were recorded hold no hash: made here, once per execution.
  const sha256 = runbook.sha256 ?? scriptSha256(script);
  // A script named without being stored: a starter runbook a person ran on an incident (incidents/troubleshoot.ts).
  if (runbook.runbookId === undefined) return { interpreter, script, runbook: { sha256, ...(runbook.name === undefined ? {} : { name: runbook.name }) } };
  return { interpreter, script, runbook: { runbookId: runbook.runbookId, version: runbook.resolvedVersion!, name: runbook.name!, sha256 } };
}

/** Whether an execution's script is still to be read from its git repository. */
export function awaitsRunbook(spec: Record<string, unknown>): boolean {
  return spec.script === undefined && (spec.runbook as RunbookRecord | undefined)?.repositoryId !== undefined;
}

/** The runbook in a person's words: its script's first line, a stored runbook's name, a git file's path. */
export function runbookWords(runbook: RunbookRef): string {
  if (runbook.repositoryId !== undefined) return `${runbook.path} from its git repository`;
  if (runbook.runbookId !== undefined) return `runbook "${runbook.name}"`;
  return `"${runbook.script!.trim().split('\n')[0]!.slice(0, 120)}"`;
}

/** Why a script must not run: it is missing, or its bytes are not the ones recorded for it. */
export function scriptMismatch(spec: { script?: string; runbook?: RunbookRecord }): string | undefined {
  if (spec.script === undefined) return 'its runbook was never read from its git repository: not run';
  const expected = spec.runbook?.sha256;
  if (expected === undefined) return undefined;
  const actual = scriptSha256(spec.script);
  return actual === expected ? undefined : `the script's SHA-256 is ${actual}, not the ${expected} recorded for its runbook: not run`;
}
