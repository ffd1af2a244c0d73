import { describe, expect, it, vi } from 'vitest';
import type { PolicyFetch } from '../egress/fetch.js';
import { alertmanagerImportNeeds } from '../integrations/alertmanager/import.js';
import { cloudwatchImportNeeds } from '../integrations/cloudwatch-sns/import-needs.js';
import { monascaImportNeeds } from '../integrations/monasca/import.js';
import { zabbixImportNeeds } from '../integrations/zabbix/import-needs.js';
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

  it('tells a tool’s reads from its writes where every call is a POST: Zabbix JSON-RPC methods, CloudWatch and STS operations', async () => {
    const zabbix = importFetch(answered, zabbixImportNeeds, new RateLimiter(1000));
    const rpc = (method: string) => zabbix('https://zabbix.example/zabbix/api_jsonrpc.php', { method: 'POST', headers: {}, body: JSON.stringify({ jsonrpc: '2.0', method, params: {}, id: 1 }) });
    for (const read of ['apiinfo.version', 'problem.get', 'event.get']) await expect(rpc(read)).resolves.toBeInstanceOf(Response);
    for (const write of ['event.acknowledge', 'trigger.update', 'user.login']) await expect(rpc(write)).rejects.toThrow(/did not send POST/);
    const aws = importFetch(answered, cloudwatchImportNeeds, new RateLimiter(1000));
    const json = (target: string) => aws('https://monitoring.eu-west-1.amazonaws.com/', { method: 'POST', headers: { 'X-Amz-Target': `GraniteServiceVersion20100801.${target}` }, body: '{}' });
    await expect(json('DescribeAlarmHistory')).resolves.toBeInstanceOf(Response);
    await expect(json('SetAlarmState')).rejects.toThrow(/did not send POST/);
    await expect(aws('https://monitoring.eu-west-1.amazonaws.com/service/GraniteServiceVersion20100801/operation/DescribeAlarms', { method: 'POST', headers: {} })).resolves.toBeInstanceOf(Response);
    await expect(aws('https://monitoring.eu-west-1.amazonaws.com/service/GraniteServiceVersion20100801/operation/PutMetricAlarm', { method: 'POST', headers: {} })).rejects.toThrow(/did not send POST/);
    await expect(aws('https://sts.eu-west-1.amazonaws.com/', { method: 'POST', headers: {}, body: 'Action=AssumeRole&Version=2011-06-15' })).resolves.toBeInstanceOf(Response);
    await expect(aws('https://monitoring.eu-west-1.amazonaws.com/', { method: 'POST', headers: {}, body: 'Action=DeleteAlarms' })).rejects.toThrow(/did not send POST/);
  });

  it('names the URL without its credentials: no user info, no query', async () => {
    const refused = importFetch(answered, alertmanagerImportNeeds, new RateLimiter(1000))('http://user:pw@am.example/api?api_key=abc123&x=1', { method: 'POST', headers: {} });
    await expect(refused).rejects.toThrow('pitcrew did not send POST http://am.example/api: an import only reads');
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
