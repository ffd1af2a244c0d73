import { assertNever } from '../errors/assert-never.js';
import type { Action } from '../rules/schema.js';
import { cliKind } from './cli/kind.js';
import { cloudKind } from './cloud/kind.js';
import { emailRunbookKind } from './email-runbook/kind.js';
import type { ActionKind } from './kind.js';
import { recordedOnly } from './recorded.js';
import { scriptKind } from './script/kind.js';
import { graphSnapshotKind } from './snapshot/kind.js';

/** Every action kind of the rules API: the one list. A new kind is a case here and a module beside. */
export function builtInKind(type: Action['type']): ActionKind {
  switch (type) {
    case 'script':
      return scriptKind;
    case 'email_runbook':
      return emailRunbookKind;
    case 'cloud':
      return cloudKind;
    case 'cli':
      return cliKind;
    case 'graph_snapshot':
      return graphSnapshotKind;
    default:
      return assertNever(type);
  }
}

/**
 * The kinds a service knows: the built-in ones, and any given to it (a test's own kind, through
 * server/app.ts), looked up by the type a rule or an execution's spec names.
 */
export class ActionKinds {
  private readonly extra: ReadonlyMap<string, ActionKind>;

  constructor(extra: readonly ActionKind[] = []) {
    this.extra = new Map(extra.map((kind) => [kind.type, kind]));
  }

  of(type: string): ActionKind {
    const extra = this.extra.get(type);
    if (extra) return extra;
    if (isBuiltIn(type)) return builtInKind(type);
    return recordedOnly(type);
  }

  /** An execution's spec in words: a script's spec has no kind. */
  describe(spec: { kind?: string; timeoutSeconds: number } & Record<string, unknown>): string {
    return this.of(spec.kind ?? 'script').describe(spec);
  }
}

const BUILT_IN: ReadonlySet<string> = new Set<Action['type']>(['script', 'email_runbook', 'cloud', 'cli', 'graph_snapshot']);

function isBuiltIn(type: string): type is Action['type'] {
  return BUILT_IN.has(type);
}
