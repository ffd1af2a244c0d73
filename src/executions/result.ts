import { Type, type Static } from 'typebox';

/** What an agent reports of a run once it ended (the `finished` message of agents/protocol.ts). */
export const ExecutionResult = Type.Object({
  executionId: Type.String({ minLength: 1, maxLength: 64 }),
  /** How the run ended on the host. `refused`: the agent would not run it (allowlist, address). */
  ending: Type.Enum(['exited', 'timed_out', 'cancelled', 'refused', 'failed_to_start']),
  exitCode: Type.Union([Type.Integer(), Type.Null()]),
  signal: Type.Union([Type.String(), Type.Null()]),
  reason: Type.Union([Type.String({ maxLength: 4000 }), Type.Null()]),
  startedAt: Type.Union([Type.Number(), Type.Null()]),
  finishedAt: Type.Number(),
  stdout: Type.String(),
  stderr: Type.String(),
  stdoutTruncated: Type.Boolean(),
  stderrTruncated: Type.Boolean(),
  artifacts: Type.Array(Type.Object({ name: Type.String({ maxLength: 255 }), base64: Type.String() }), { maxItems: 100 }),
  artifactsTruncated: Type.Boolean(),
});

export type ExecutionResult = Static<typeof ExecutionResult>;
