import type { Rule } from '../../rules/rule.js';
import type { ActionKind } from '../kind.js';
import { graphSnapshotKind, snapshotSpec, type SnapshotRequest } from './kind.js';

/**
 * "Capture graphs too" (docs/graph-snapshots.md): a script, cloud or CLI action with `snapshot` gets,
 * beside its fix's executions, one graph_snapshot execution of the same event, run by the service
 * on its own. The fix never waits for it, and its failure is its own: the fix's execution view lists
 * the event's snapshots. Stored with `companion = 1`, outside the rule's action limit.
 */
export function companionOf(rule: Rule): ActionKind | undefined {
  const request = snapshotRequest(rule);
  if (!request) return undefined;
  return { ...graphSnapshotKind, spec: (withRule, run) => snapshotSpec(withRule, request, run) };
}

function snapshotRequest(rule: Rule): SnapshotRequest | undefined {
  const { action } = rule;
  switch (action.type) {
    case 'script':
    case 'cloud':
    case 'cli':
      return action.snapshot;
    default:
      return undefined;
  }
}
