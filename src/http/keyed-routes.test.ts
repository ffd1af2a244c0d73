import { describe, expect, it } from 'vitest';
import { KeyedRoutes } from './keyed-routes.js';

const KEY = '0123456789abcdef'.repeat(4);

describe('KeyedRoutes', () => {
  const routes = new KeyedRoutes();
  for (const path of ['/api/v1/trigger/channel/webhook/:apiKey/:triggerId', '/api/v1/trigger/channel/:type/:apiKey/:integrationId', '/api/v1/rules/:id', '/hooks/:name-:token', '/files/::name/:secret']) routes.add(path);

  it('knows the routes whose path holds a secret parameter, and only those', () => {
    expect(routes.paths).toEqual(['/api/v1/trigger/channel/webhook/:apiKey/:triggerId', '/api/v1/trigger/channel/:type/:apiKey/:integrationId', '/hooks/:name-:token', '/files/::name/:secret']);
  });

  it('replaces the secret segment of every URL that fits a keyed route up to the secret, whatever follows', () => {
    const cases: [string, string][] = [
      ['/api/v1/trigger/channel/webhook/not-a-hex-key/t-1', '/api/v1/trigger/channel/webhook/[REDACTED]/t-1'],
      ['/api/v1/trigger/channel/zabbix/x.y/i-1?Act=false', '/api/v1/trigger/channel/zabbix/[REDACTED]/i-1?Act=false'],
      ['/api/v1/trigger/channel/webhook/short', '/api/v1/trigger/channel/webhook/[REDACTED]'],
      ['/api/v1/trigger/channel/webhook/short/t-1/more/segments', '/api/v1/trigger/channel/webhook/[REDACTED]/t-1/more/segments'],
      ['/API/V1/Trigger/channel/webhook/short/t-1', '/API/V1/Trigger/channel/webhook/[REDACTED]/t-1'],
      ['//api/v1//trigger/channel/webhook/short/t-1', '//api/v1//trigger/channel/webhook/[REDACTED]/t-1'],
      ['/hooks/deploy-s3cr3t', '/hooks/[REDACTED]'],
      ['/files/:name/s3cr3t', '/files/:name/[REDACTED]'],
      ['/api/v1/rules/short', '/api/v1/rules/short'],
      ['/api/v1/trigger/channel', '/api/v1/trigger/channel'],
    ];
    for (const [url, shown] of cases) expect(routes.redact(url), url).toBe(shown);
  });

  it('hides a run of hex digits as long as a key\'s anywhere, even in a URL no keyed route fits', () => {
    expect(routes.redact(`/api/trigger/channel/alertmanager/${KEY}/i-1`)).toBe('/api/trigger/channel/alertmanager/[REDACTED]/i-1');
    expect(routes.redact(`/api/v1/rules?token=pct_${KEY}`)).toBe('/api/v1/rules?token=pct_[REDACTED]');
    // A UUID's longest run is 12 digits: ids stay readable.
    expect(routes.redact('/api/v1/rules/0192f3a4-5b6c-7d8e-9f01-23456789abcd')).toBe('/api/v1/rules/0192f3a4-5b6c-7d8e-9f01-23456789abcd');
  });
});
