import { Type, type Static } from 'typebox';
import { presentSnapshot, SnapshotView } from '../snapshots/presenter.js';
import type { SnapshotMeta } from '../snapshots/repository.js';
import type { ExecutionRow } from '../store/schema.js';
import type { ExecutionSpec } from './repository.js';
import { kindOfSpec } from './service-runs.js';
import { EXECUTION_STATES } from './states.js';
import { storedTerms } from './approvals.js';

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const ExecutionView = Type.Object({
  id: Type.String(),
  ruleId: Type.String(),
  eventId: Type.String(),
  hostId: Type.Union([Type.String(), Type.Null()]),
  hostname: Type.String(),
  state: Type.Enum([...EXECUTION_STATES]),
  actionType: Type.String({ description: 'the action kind: script (on the host by its agent); email_runbook, cloud, cli and graph_snapshot (by the service: no host)' }),
  reason: Type.Union([Type.String(), Type.Null()]),
  flavour: Type.String(),
  interpreter: Type.String(),
  timeoutSeconds: Type.Integer(),
  script: Type.Optional(Type.Union([Type.String(), Type.Null()], { description: "GET /executions/{id} only: the script it runs, as copied when the event arrived (a git file's once read, before dispatch); null for kinds that run none" })),
  runbook: Type.Union([Type.Object({
    runbookId: Type.Optional(Type.String({ description: 'a stored runbook' })),
    version: Type.Optional(Type.Integer({ description: "the stored runbook's version that ran" })),
    name: Type.Optional(Type.String()),
    repositoryId: Type.Optional(Type.String({ description: 'a git repository' })),
    repositoryName: Type.Optional(Type.String()),
    path: Type.Optional(Type.String()),
    ref: Type.Optional(Type.String()),
    commit: Type.Optional(Type.String({ description: 'the commit the file was read at' })),
    sha256: Type.Optional(Type.String({ description: "hex SHA-256 of the script's bytes, which the agent checked; absent until a git file is read" })),
  }), Type.Null()], { description: 'which runbook ran: a stored version, a git commit, or the script written in the rule (sha256 only)' }),
  exitCode: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([Type.String(), Type.Null()]),
  stdout: Type.String(),
  stderr: Type.String(),
  stdoutTruncated: Type.Boolean(),
  stderrTruncated: Type.Boolean(),
  queuedAt: Type.String({ format: 'date-time' }),
  dispatchedAt: Time,
  startedAt: Time,
  finishedAt: Time,
  expiresAt: Type.String({ format: 'date-time' }),
  durationMs: Type.Union([Type.Integer(), Type.Null()]),
  cancelRequested: Type.Boolean(),
  held: Type.Boolean({ description: "queued but waiting for a slot of its fan-out's maxConcurrency" }),
  awaitingRunbook: Type.Boolean({ description: 'queued but waiting for its runbook to be read from its git repository, before dispatch' }),
  lateResult: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()], { description: 'what the host reported after the execution had already ended (e.g. lost)' }),
  approval: Type.Union([Type.Object({
    role: Type.String({ description: 'the least role that may approve or reject' }),
    timeoutSeconds: Type.Integer(),
    onTimeout: Type.String({ description: 'expire or escalate' }),
    deadline: Type.String({ format: 'date-time', description: 'past it, nobody having decided, it ends expired' }),
    approvedAt: Time,
  }), Type.Null()], { description: "the terms it waited for a person's approval under (docs/approvals.md); null: it never waited" }),
  transitions: Type.Optional(Type.Array(Type.Object({
    from: Type.Union([Type.String(), Type.Null()]), to: Type.String(), reason: Type.Union([Type.String(), Type.Null()]), at: Type.String(),
    decidedBy: Type.Optional(Type.Object({ userId: Type.String(), email: Type.Union([Type.String(), Type.Null()]), via: Type.String({ description: 'ui, api, email, slack or teams' }), comment: Type.Optional(Type.String()) }, { description: "the person whose approval or rejection made this move" })),
  }))),
  artifacts: Type.Optional(Type.Array(Type.Object({ id: Type.String(), name: Type.String(), size: Type.Integer() }))),
  snapshots: Type.Optional(Type.Array(SnapshotView, { description: "the graphs captured: a graph_snapshot run's, or for a fix, those its event's capture took (docs/graph-snapshots.md)" })),
});

export type ExecutionView = Static<typeof ExecutionView>;

interface Details {
  transitions: Array<{ from_state: string | null; to_state: string; reason: string | null; at: number; decided_by?: string | null }>;
  artifacts: Array<{ id: string; name: string; size: number }>;
  snapshots: SnapshotMeta[];
}

export function presentExecution(row: ExecutionRow, details?: Details): ExecutionView {
  const stored = JSON.parse(row.spec) as Partial<ExecutionSpec> & { kind?: string; timeoutSeconds: number };
  const actionType = kindOfSpec(stored);
  // A run by the service may name no flavour or interpreter: its kind stands for both.
  const spec = { flavour: stored.flavour ?? actionType, interpreter: stored.interpreter ?? actionType, timeoutSeconds: stored.timeoutSeconds };
  const view: ExecutionView = {
    id: row.id,
    ruleId: row.rule_id,
    eventId: row.event_id,
    hostId: row.host_id,
    hostname: row.hostname,
    state: row.state as ExecutionView['state'],
    actionType,
    reason: row.reason,
    flavour: spec.flavour,
    interpreter: spec.interpreter,
    timeoutSeconds: spec.timeoutSeconds,
    runbook: stored.runbook ?? null,
    exitCode: row.exit_code,
    signal: row.signal,
    stdout: row.stdout,
    stderr: row.stderr,
    stdoutTruncated: row.stdout_truncated === 1,
    stderrTruncated: row.stderr_truncated === 1,
    queuedAt: iso(row.queued_at)!,
    dispatchedAt: iso(row.dispatched_at),
    startedAt: iso(row.started_at),
    finishedAt: iso(row.finished_at),
    expiresAt: iso(row.expires_at)!,
    durationMs: row.started_at !== null && row.finished_at !== null ? row.finished_at - row.started_at : null,
    cancelRequested: row.cancel_requested_at !== null,
    held: row.held === 1 && row.awaiting_runbook === 0,
    awaitingRunbook: row.awaiting_runbook === 1,
    lateResult: row.late_result ? (JSON.parse(row.late_result) as Record<string, unknown>) : null,
    approval: approvalView(row),
  };
  if (details) {
    view.transitions = details.transitions.map((t) => ({ from: t.from_state, to: t.to_state, reason: t.reason, at: iso(t.at)!, ...(t.decided_by ? { decidedBy: JSON.parse(t.decided_by) as DecidedBy } : {}) }));
    view.artifacts = details.artifacts;
    view.snapshots = details.snapshots.map(presentSnapshot);
    view.script = typeof stored.script === 'string' ? stored.script : null;
  }
  return view;
}

type DecidedBy = NonNullable<NonNullable<ExecutionView['transitions']>[number]['decidedBy']>;

function approvalView(row: ExecutionRow): ExecutionView['approval'] {
  const terms = storedTerms(row);
  if (!terms) return null;
  return { role: terms.role, timeoutSeconds: terms.timeoutSeconds, onTimeout: terms.onTimeout, deadline: iso(terms.deadline)!, approvedAt: iso(row.approved_at) };
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(ms).toISOString();
}
