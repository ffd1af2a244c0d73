import { Type, type Static } from 'typebox';
import { Compile } from 'typebox/compile';
import { ExecutionResult } from '../executions/result.js';

/*
 * The agent wire protocol: JSON messages over one WebSocket per agent, each a member of a union
 * told apart by `type`. Shared by the service and the agent (which bundles this file), validated
 * on receipt. PROTOCOL_VERSION changes when a message changes incompatibly.
 */
export const PROTOCOL_VERSION = 1;

/** Part of the protocol (`finished`); the executions own its meaning. */
export { ExecutionResult };

const Id = Type.String({ minLength: 1, maxLength: 64 });
/** The names enrolment takes (agents/routes.ts); a hello renames its host to one (another case). */
export const HOSTNAME_PATTERN = '^[A-Za-z0-9_.:-]+$';
const Interpreter = Type.Enum(['sh', 'bash', 'python', 'pwsh']);
const Stream = Type.Enum(['stdout', 'stderr']);

// Agent → service
export const Hello = Type.Object({
  type: Type.Literal('hello'),
  v: Type.Integer(),
  hostname: Type.String({ minLength: 1, maxLength: 253, pattern: HOSTNAME_PATTERN }),
  tags: Type.Array(Type.String({ maxLength: 128 }), { maxItems: 50 }),
  os: Type.String({ maxLength: 200 }),
  arch: Type.String({ maxLength: 50 }),
  version: Type.String({ maxLength: 50 }),
  /** The machine's instance id at its cloud (EC2 i-…, a Nova server id), when the agent knows it. */
  cloudInstanceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_./:-]+$' })),
  /** Executions this agent process is running now. */
  running: Type.Array(Id),
  /** Executions a previous agent process started and could not finish (it died): never re-run. */
  interrupted: Type.Array(Type.Object({ executionId: Id, reason: Type.String({ maxLength: 1000 }) })),
  /**
   * Executions that ended while the service could not hear: their results follow the welcome.
   * Optional, so agents older than it still connect (their such runs are reported lost).
   */
  finished: Type.Optional(Type.Array(Id)),
});
export const Heartbeat = Type.Object({ type: Type.Literal('heartbeat'), at: Type.Number() });
export const Started = Type.Object({ type: Type.Literal('started'), executionId: Id, startedAt: Type.Number() });
export const Output = Type.Object({ type: Type.Literal('output'), executionId: Id, stream: Stream, chunk: Type.String() });
export const Finished = Type.Object({ type: Type.Literal('finished'), result: ExecutionResult });
export const AgentMessage = Type.Union([Hello, Heartbeat, Started, Output, Finished]);

// Service → agent
export const Welcome = Type.Object({
  type: Type.Literal('welcome'),
  v: Type.Integer(),
  hostId: Id,
  tenantId: Id,
  heartbeatSeconds: Type.Integer(),
});
export const Execute = Type.Object({
  type: Type.Literal('execute'),
  executionId: Id,
  /** The agent checks both: it runs only what is addressed to its own host in its own tenant. */
  hostId: Id,
  tenantId: Id,
  flavour: Type.Enum(['autofix', 'diagnostics']),
  interpreter: Interpreter,
  script: Type.String(),
  /** Hex SHA-256 of the script's UTF-8 bytes as the service recorded it: the agent runs nothing else. */
  sha256: Type.Optional(Type.String({ pattern: '^[0-9a-f]{64}$' })),
  /** Variables from the event payload. */
  env: Type.Record(Type.String(), Type.String()),
  /** PITCREW_* variables describing the run; the agent adds PITCREW_ARTIFACTS for diagnostics. */
  context: Type.Record(Type.String(), Type.String()),
  timeoutSeconds: Type.Integer({ minimum: 1 }),
});
export const Cancel = Type.Object({ type: Type.Literal('cancel'), executionId: Id });
/** The service stored a result: the agent may forget it. */
export const Recorded = Type.Object({ type: Type.Literal('recorded'), executionId: Id });
export const ServiceMessage = Type.Union([Welcome, Execute, Cancel, Recorded]);

export type Hello = Static<typeof Hello>;
export type AgentMessage = Static<typeof AgentMessage>;
export type ServiceMessage = Static<typeof ServiceMessage>;
export type Execute = Static<typeof Execute>;
export type Welcome = Static<typeof Welcome>;

const agentMessage = Compile(AgentMessage);
const serviceMessage = Compile(ServiceMessage);

/** Parses and validates one frame; undefined for anything that is not a known message. */
export function parseAgentMessage(text: string): AgentMessage | undefined {
  return parseWith(text, (value) => agentMessage.Check(value));
}

export function parseServiceMessage(text: string): ServiceMessage | undefined {
  return parseWith(text, (value) => serviceMessage.Check(value));
}

function parseWith<T>(text: string, check: (value: unknown) => boolean): T | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  return check(value) ? (value as T) : undefined;
}

export function assertNever(value: never): never {
  throw new Error(`unexpected message ${JSON.stringify(value)}`);
}
