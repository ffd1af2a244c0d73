// One load run with autocannon, with exact accounting of what was sent and answered.
//
// autocannon generates the load (HTTP/1.1 keep-alive, pipelining 1). The figures are counted here
// from each autocannon client's own events, because:
//  - autocannon records latency in whole milliseconds, too coarse for a sub-millisecond route;
//    here every response's duration (float ms from process.hrtime) is kept and sorted;
//  - with a rate set, autocannon "corrects" latencies for coordinated omission with an expected
//    interval of ceil(1 / per-connection-rate) = 1 ms, which adds synthetic samples v-1, v-2 ... 1
//    for every response of v ms; we turn that off (ignoreCoordinatedOmission) and keep raw values;
//  - runs end on a request count (`amount`), not a timer: a timer-ended autocannon run destroys its
//    sockets with requests in flight, whose events may be stored without a reply being counted,
//    which would make "events stored == 2xx replies" unverifiable. A run ends when every client has
//    had all its replies; a watchdog stops a run that takes far too long, and the requests it cuts
//    off are counted (`unanswered`).
import { performance } from 'node:perf_hooks';
import autocannon from 'autocannon';

/**
 * @param {object} o
 * @param {string} o.url            absolute http://127.0.0.1:PORT/... URL
 * @param {string} [o.body]         JSON request body
 * @param {string} [o.method]       POST unless set
 * @param {Record<string, string>} [o.headers]  sent besides content-type (a bearer token)
 * @param {number} o.connections
 * @param {number} o.amount         requests to send in total
 * @param {number} [o.rate]         overall requests per second (autocannon overallRate); none = as fast as possible
 * @param {number} o.watchdogMs     stop the run after this long whatever happened
 * @param {Promise<unknown>} [o.stopWhen]  stop the run early when this settles (e.g. the server exited)
 */
export async function runLoad({ url, body, method = 'POST', headers = {}, connections, amount, rate, watchdogMs, stopWhen }) {
  if (!/^http:\/\/127\.0\.0\.1:\d+\//.test(url)) throw new Error(`refusing to load a non-loopback URL: ${url}`);
  const conns = Math.max(1, Math.min(connections, amount, rate ?? Infinity));
  const latencies = new Float64Array(amount + conns * 2);
  const s = { sent: 0, answered: 0, ok: 0, non2xx: 0, statuses: {}, errors: 0, timeouts: 0, n: 0, lastAt: 0 };

  const options = {
    url,
    method,
    headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
    body,
    connections: conns,
    pipelining: 1,
    amount,
    timeout: 10,
    // autocannon notices that every client is done only at its next sample tick; tick often so a
    // run ends promptly after its last reply (the samples themselves are not used).
    sampleInt: 100,
    setupClient(client) {
      client.on('request', () => {
        s.sent += 1;
      });
      client.on('response', (status, _bytes, durationMs) => {
        s.answered += 1;
        s.lastAt = performance.now();
        if (status >= 200 && status < 300) s.ok += 1;
        else s.non2xx += 1;
        s.statuses[status] = (s.statuses[status] ?? 0) + 1;
        if (s.n < latencies.length) latencies[s.n++] = durationMs;
      });
    },
  };
  if (rate) Object.assign(options, { overallRate: rate, ignoreCoordinatedOmission: true });

  const started = performance.now();
  let watchdogFired = false;
  let watchdog;
  const result = await new Promise((resolve, reject) => {
    const instance = autocannon(options, (error, res) => (error ? reject(error) : resolve(res)));
    instance.on('reqError', () => {
      s.errors += 1;
    });
    watchdog = setTimeout(() => {
      watchdogFired = true;
      instance.stop();
    }, watchdogMs);
    stopWhen?.then(() => instance.stop(), () => instance.stop());
  }).finally(() => clearTimeout(watchdog));
  s.timeouts = result.timeouts ?? 0;

  const elapsedSeconds = ((s.lastAt || performance.now()) - started) / 1000;
  const sorted = latencies.subarray(0, s.n).sort();
  const pct = (p) => percentile(sorted, p);
  return {
    connections: conns,
    amount,
    rate: rate ?? null,
    sent: s.sent,
    answered: s.answered,
    ok: s.ok,
    non2xx: s.non2xx,
    statuses: s.statuses,
    errors: s.errors,
    timeouts: s.timeouts,
    unanswered: Math.max(0, s.sent - s.answered),
    watchdogFired,
    elapsedSeconds,
    throughput: s.ok / elapsedSeconds,
    p50: pct(0.5),
    p99: pct(0.99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
  };
}

/** The p-quantile (0..1, nearest rank) of ascending sorted values; NaN when there are none. */
export function percentile(sorted, p) {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))];
}
