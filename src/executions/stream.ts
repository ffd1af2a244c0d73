import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Kysely } from 'kysely';
import type { Database, ExecutionRow } from '../store/schema.js';
import type { LiveEvent, LiveExecutions } from './live.js';
import { presentExecution } from './presenter.js';
import { getExecution } from './repository.js';
import { isAhead, isTerminal, type ExecutionState } from './states.js';

// State changes made on other nodes (an approval, a run of an agent connected elsewhere) reach a
// stream here through the stored state.
const STATE_POLL_MS = 1000;
const KEEPALIVE_MS = 15_000;

/**
 * Server-Sent Events for one execution: `state` on every change, `output` chunks while it runs,
 * then `end` with the stored execution (its full output) once it reached a terminal state.
 */
export interface StreamDeps {
  db: Kysely<Database>;
  live: LiveExecutions;
  /** Asks for the output of an agent connected to another node (cluster/live-relay.ts); returns how to stop. */
  watchRemote(executionId: string, hostId: string): () => void;
}

export function streamExecution(deps: StreamDeps, request: FastifyRequest, reply: FastifyReply, row: ExecutionRow): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, { 'Content-Type': 'text/event-stream; charset=utf-8', 'Cache-Control': 'no-cache', Connection: 'keep-alive', 'X-Accel-Buffering': 'no' });
  const send = (event: string, data: unknown) => res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  let done = false;
  const timers: NodeJS.Timeout[] = [];
  let unsubscribe = () => undefined as void;

  const finish = async () => {
    if (done) return;
    done = true;
    cleanup();
    const final = await getExecution(deps.db, row.tenant_id, row.id);
    send('end', presentExecution(final));
    res.end();
  };
  const cleanup = () => {
    for (const timer of timers) clearInterval(timer);
    unsubscribe();
  };
  const fail = (error: unknown) => {
    request.log.warn({ err: error }, 'execution stream ended early');
    cleanup();
    res.end();
  };

  let shown = row.state as ExecutionState;
  send('state', { state: shown });
  if (isTerminal(shown)) return void finish().catch(fail);

  const showState = (state: ExecutionState) => {
    if (state !== shown) send('state', { state });
    shown = state;
    if (isTerminal(state)) void finish().catch(fail);
  };
  const forward = (event: LiveEvent) => {
    if (event.kind === 'output') send('output', { stream: event.stream, chunk: event.chunk });
    else showState(event.state);
  };
  // Output of an agent connected to another node is relayed from there (cluster/live-relay.ts, through watchRemote).
  const unwatch = row.host_id ? deps.watchRemote(row.id, row.host_id) : () => undefined;
  for (const event of deps.live.buffered(row.id)) forward(event);
  const unsubscribeLive = deps.live.subscribe(row.id, forward);
  unsubscribe = () => {
    unwatch();
    unsubscribeLive();
  };
  timers.push(setInterval(() => {
    void getExecution(deps.db, row.tenant_id, row.id).then((now) => {
      // A read that started before a change this node pushed may come back behind it.
      if (!done && isAhead(shown, now.state as ExecutionState)) showState(now.state as ExecutionState);
    }).catch(fail);
  }, STATE_POLL_MS));
  timers.push(setInterval(() => res.write(': keep-alive\n\n'), KEEPALIVE_MS));
  request.raw.on('close', () => {
    done = true;
    cleanup();
  });
}
