import { PitcrewError } from '../../src/errors/catalogue.js';
import type { PolicyFetch } from '../../src/egress/fetch.js';
import type { GraphAlert, GraphCapture } from '../../src/integrations/graph-source.js';
import { loopbackFetch } from './import-run.js';

/** The window the tests capture: the last hour, as the wizard's Preview does. */
export const HOUR = 3_600_000;

/**
 * A capture as the graph_snapshot action makes one: the integration's config and graph secret, the
 * rule's graphs, the alert, the window, e-mail width, and the service's egress-checked fetch
 * (loopback allowed, where the emulators listen).
 */
export function captureOf(overrides: Partial<Omit<GraphCapture, 'alert'>> & { alert?: Partial<GraphAlert> } = {}): GraphCapture & { sent: { urls: string[]; methods: string[] } } {
  const sent = loopbackFetch();
  const to = overrides.to ?? Date.now();
  const { alert, ...rest } = overrides;
  return {
    config: {},
    secret: undefined,
    graphs: [],
    from: to - HOUR,
    to,
    width: 600,
    height: 300,
    signal: AbortSignal.timeout(20_000),
    ...rest,
    fetch: (overrides.fetch ?? sent.fetch) as PolicyFetch,
    alert: { alarmName: 'High CPU', hostname: 'web-1', labels: {}, generatorURL: undefined, startedAt: to - 10 * 60_000, payload: {}, ...alert },
    sent: { urls: sent.urls, methods: sent.methods },
  };
}

/** The error a capture fails with; a capture that succeeds fails the test. */
export async function failureOf(capture: Promise<unknown>): Promise<PitcrewError> {
  const outcome = await capture.then(
    (graphs) => ({ graphs }),
    (error: unknown) => ({ error }),
  );
  if (!('error' in outcome)) throw new Error(`the capture succeeded: ${JSON.stringify(outcome.graphs).slice(0, 200)}`);
  if (!(outcome.error instanceof PitcrewError)) throw outcome.error;
  return outcome.error;
}
