import { describe, expect, it, vi } from 'vitest';
import type { PolicyFetch } from '../egress/fetch.js';
import { alertmanagerImportNeeds } from '../integrations/alertmanager/import.js';
import { monascaImportNeeds } from '../integrations/monasca/import.js';
import { RateLimiter } from './rate-limit.js';
import { importFetch } from './read-only.js';

const answered: PolicyFetch = async () => new Response('{}', { status: 200 });

describe('an import’s fetch', () => {
  it('sends GETs, refuses every write before it leaves, and lets through only the calls a tool reads with', async () => {
    const base = vi.fn(answered);
    const amFetch = importFetch(base, alertmanagerImportNeeds, new RateLimiter(1000));
    await amFetch('http://am.example:9093/api/v2/alerts', { method: 'GET', headers: {} });
    for (const method of ['POST', 'PUT', 'DELETE', 'PATCH']) {
      await expect(amFetch('http://am.example:9093/api/v2/silences', { method, headers: {}, body: '{}' })).rejects.toThrow(`pitcrew did not send ${method} http://am.example:9093/api/v2/silences: an import only reads from Alertmanager`);
    }
    const monascaFetch = importFetch(base, monascaImportNeeds, new RateLimiter(1000));
    await monascaFetch('http://keystone.example:5000/v3/auth/tokens', { method: 'POST', headers: {}, body: '{}' });
    await expect(monascaFetch('http://monasca.example:8070/v2.0/alarms/a1', { method: 'PATCH', headers: {}, body: '{"state":"OK"}' })).rejects.toThrow(/did not send PATCH/);
    await expect(monascaFetch('http://monasca.example:8070/v2.0/alarm-definitions', { method: 'POST', headers: {}, body: '{}' })).rejects.toThrow(/did not send POST/);
    expect(base.mock.calls.map(([url, init]) => `${init.method} ${url}`)).toEqual(['GET http://am.example:9093/api/v2/alerts', 'POST http://keystone.example:5000/v3/auth/tokens']);
  });

  it('masks credentials in the URL it names', async () => {
    const refused = importFetch(answered, alertmanagerImportNeeds, new RateLimiter(1000))('http://user:pw@am.example/api?api_key=abc123&x=1', { method: 'POST', headers: {} });
    await expect(refused).rejects.toThrow('POST http://am.example/api?api_key=***&x=1');
  });
});

describe('the import rate limit', () => {
  it('spaces calls evenly at the integration’s requests per second, and stops waiting when the import is stopped', async () => {
    vi.useFakeTimers({ now: 1_000_000 });
    try {
      const limiter = new RateLimiter(4);
      const passed: number[] = [];
      const calls = [0, 1, 2].map((i) => limiter.take().then(() => passed.push(i)));
      await vi.advanceTimersByTimeAsync(0);
      expect(passed).toEqual([0]);
      await vi.advanceTimersByTimeAsync(249);
      expect(passed).toEqual([0]);
      await vi.advanceTimersByTimeAsync(1);
      expect(passed).toEqual([0, 1]);
      await vi.advanceTimersByTimeAsync(250);
      await Promise.all(calls);
      expect(passed).toEqual([0, 1, 2]);
      const stop = new AbortController();
      const waiting = limiter.take(stop.signal);
      stop.abort(new Error('stopping'));
      await expect(waiting).rejects.toThrow('stopping');
    } finally {
      vi.useRealTimers();
    }
  });
});
