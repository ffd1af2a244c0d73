import { describe, expect, it } from 'vitest';
import { GCE_INSTANCE, gceInstanceName, parseGceInstance } from './gce-names.js';

describe('GCE instance names', () => {
  it.each([
    ['projects/shop-prod/zones/europe-west1-b/instances/web-1', undefined, 'projects/shop-prod/zones/europe-west1-b/instances/web-1'],
    ['https://www.googleapis.com/compute/v1/projects/shop-prod/zones/europe-west1-b/instances/web-1', undefined, 'projects/shop-prod/zones/europe-west1-b/instances/web-1'],
    ['https://compute.googleapis.com/compute/beta/projects/example.com:legacy-app/zones/us-central1-a/instances/db', undefined, 'projects/example.com:legacy-app/zones/us-central1-a/instances/db'],
    ['northamerica-northeast1-a/web-1', undefined, 'northamerica-northeast1-a/web-1'],
    ['web-1', 'europe-west1-b', 'europe-west1-b/web-1'],
    ['web-1', undefined, undefined],
    ['web-1', 'europe-west1', undefined],
    ['Web-1', 'europe-west1-b', undefined],
    ['i-0123456789abcdef0', undefined, undefined],
    ['projects/shop-prod/zones/europe-west1-b/instances/../x', undefined, undefined],
    ['https://evil.example/compute/v1/projects/shop-prod/zones/europe-west1-b/instances/web-1', undefined, undefined],
    [`europe-west1-b/${'a'.repeat(64)}`, undefined, undefined],
  ])('%s (zone %s) is recorded as %s', (text, zone, expected) => {
    expect(gceInstanceName(text, zone)).toBe(expected);
  });

  it('takes the key’s project for the short forms, and every form fits a host’s cloudInstanceId', () => {
    expect(parseGceInstance('europe-west1-b/web-1', 'shop-prod', undefined)).toEqual({ project: 'shop-prod', zone: 'europe-west1-b', name: 'web-1' });
    expect(parseGceInstance('web-1', 'shop-prod', 'us-east4-c')).toEqual({ project: 'shop-prod', zone: 'us-east4-c', name: 'web-1' });
    expect(parseGceInstance('projects/other-proj/zones/us-east4-c/instances/web-1', 'shop-prod', 'europe-west1-b')).toEqual({ project: 'other-proj', zone: 'us-east4-c', name: 'web-1' });
    const longest = `https://www.googleapis.com/compute/v1/projects/${'p'.repeat(30)}/zones/northamerica-northeast1-a/instances/${'n'.repeat(63)}`;
    expect(GCE_INSTANCE.test(longest)).toBe(true);
    // hosts/routes.ts and agents/protocol.ts: at most 200 characters of [A-Za-z0-9_./:-].
    expect(longest.length).toBeLessThanOrEqual(200);
    expect(/^[A-Za-z0-9_./:-]+$/.test(longest)).toBe(true);
  });
});
