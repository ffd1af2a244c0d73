import type { RunbookInput } from '../../api/runbook-types';
import type { InlineRunbook, Interpreter, RepositoryRunbookRef, Runbook, StoredRunbookRef } from '../../api/types';
import { toNumber, wholeNumberError } from '../../ui/numbers';

/**
 * Where a script or CLI action's runbook comes from (docs/runbooks.md): written here, a stored
 * runbook (following its latest version or pinned to one), what is written here saved as a new
 * stored runbook when the rule is created, or a file in one of the tenant's git repositories.
 */
export type RunbookSource = 'inline' | 'stored' | 'new' | 'git';

export interface RunbookSourceFields {
  runbookSource: RunbookSource;
  /** stored: the runbook chosen. */
  runbookId: string;
  /** stored and new: follow the latest version, or run one version only. */
  runbookPin: 'latest' | 'pinned';
  /** As typed: the pinned version. */
  runbookVersion: string;
  /** new: the name the written script is stored under. */
  newRunbookName: string;
  repositoryId: string;
  repositoryPath: string;
  /** Empty: the repository's own ref. */
  repositoryRef: string;
}

/** The written runbook's fields, which "inline" sends as is and "new" stores. */
export interface WrittenRunbook {
  interpreter: Interpreter;
  script: string;
  notes: string;
}

export type RunbookSourceField = keyof RunbookSourceFields;

export function emptyRunbookSourceFields(): RunbookSourceFields {
  return { runbookSource: 'inline', runbookId: '', runbookPin: 'latest', runbookVersion: '', newRunbookName: '', repositoryId: '', repositoryPath: '', repositoryRef: '' };
}

export function isStored(runbook: Runbook): runbook is StoredRunbookRef {
  return 'runbookId' in runbook;
}

export function isInRepository(runbook: Runbook): runbook is RepositoryRunbookRef {
  return 'repositoryId' in runbook;
}

export function isInline(runbook: Runbook): runbook is InlineRunbook {
  return 'script' in runbook;
}

/** The form of a rule's runbook: its source's fields, and the written fields for one written into the rule. */
export function runbookFieldsOf(runbook: Runbook): Partial<RunbookSourceFields & WrittenRunbook> {
  if (isStored(runbook)) {
    return { runbookSource: 'stored', runbookId: runbook.runbookId, runbookPin: runbook.version === undefined ? 'latest' : 'pinned', runbookVersion: runbook.version === undefined ? '' : String(runbook.version) };
  }
  if (isInRepository(runbook)) {
    return { runbookSource: 'git', repositoryId: runbook.repositoryId, repositoryPath: runbook.path, repositoryRef: runbook.ref ?? '', interpreter: runbook.interpreter ?? 'sh' };
  }
  return { runbookSource: 'inline', interpreter: runbook.interpreter ?? 'sh', script: runbook.script, notes: runbook.notes ?? '' };
}

/**
 * The runbook to send. "new" is sent as the stored runbook it became: the wizard stores it first
 * and then holds its id (until then, the API preview shows the id to come).
 */
export function toRunbook(form: RunbookSourceFields & WrittenRunbook): Runbook {
  switch (form.runbookSource) {
    case 'stored':
    case 'new': {
      const pinned = form.runbookPin === 'pinned' ? { version: form.runbookSource === 'new' ? 1 : toNumber(form.runbookVersion) } : {};
      return { runbookId: form.runbookId || '(the new runbook’s id)', ...pinned };
    }
    case 'git': {
      const ref = form.repositoryRef.trim();
      return { repositoryId: form.repositoryId, path: form.repositoryPath.trim(), ...(ref ? { ref } : {}), interpreter: form.interpreter };
    }
    case 'inline':
      return { script: form.script, interpreter: form.interpreter, ...(form.notes.trim() ? { notes: form.notes } : {}) };
  }
}

/** What "save what I write as a new runbook" stores: its notes become the runbook's description. */
export function newRunbookInput(form: RunbookSourceFields & WrittenRunbook): RunbookInput {
  return { name: form.newRunbookName.trim(), interpreter: form.interpreter, script: form.script, description: form.notes };
}

/** The runbook's quick checks before leaving the step; the service checks everything again. */
export function runbookSourceErrors(form: RunbookSourceFields & WrittenRunbook): Partial<Record<RunbookSourceField | 'script', string>> {
  switch (form.runbookSource) {
    case 'inline':
      return form.script.trim() ? {} : { script: 'write the script to run' };
    case 'new':
      return {
        ...(form.newRunbookName.trim() ? {} : { newRunbookName: 'name the new runbook, e.g. “restart nginx”' }),
        ...(form.script.trim() ? {} : { script: 'write the script to run' }),
      };
    case 'stored': {
      if (!form.runbookId) return { runbookId: 'pick the runbook the rule runs' };
      const version = form.runbookPin === 'pinned' ? wholeNumberError(form.runbookVersion, 1, 1_000_000_000) : undefined;
      return version ? { runbookVersion: version } : {};
    }
    case 'git':
      return {
        ...(form.repositoryId ? {} : { repositoryId: 'pick the repository that holds the runbook' }),
        ...(form.repositoryPath.trim() ? {} : { repositoryPath: 'give the path of the script in the repository, e.g. runbooks/restart.sh' }),
      };
  }
}

/** Where the service's errors about a referenced runbook go: before the catch-all of the action. */
export const RUNBOOK_BODY_FIELDS: Array<[RegExp, RunbookSourceField]> = [
  [/^\/body\/action\/runbook\/runbookId/, 'runbookId'],
  [/^\/body\/action\/runbook\/version/, 'runbookVersion'],
  [/^\/body\/action\/runbook\/repositoryId/, 'repositoryId'],
  [/^\/body\/action\/runbook\/path/, 'repositoryPath'],
  [/^\/body\/action\/runbook\/ref/, 'repositoryRef'],
];

/** The wizard field of an error of the new runbook's save (POST /runbooks). */
export function newRunbookFieldOf(path: string): 'newRunbookName' | 'script' | 'interpreter' | 'notes' | undefined {
  if (/^\/body\/name/.test(path)) return 'newRunbookName';
  if (/^\/body\/script/.test(path)) return 'script';
  if (/^\/body\/interpreter/.test(path)) return 'interpreter';
  if (/^\/body\/description/.test(path)) return 'notes';
  return undefined;
}
