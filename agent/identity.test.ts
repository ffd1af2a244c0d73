import { describe, expect, it } from 'vitest';
import { findAccount, findGroup, ROOT_REFUSAL, rootRefusal } from './identity.js';

const PASSWD = 'root:x:0:0:root:/root:/bin/bash\n# comment\nnobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\npitcrew:x:998:997::/var/lib/pitcrew:/bin/sh\n';
const GROUP = 'root:x:0:\nnogroup:x:65534:\nops:x:1200:alice,bob\n';

describe('accounts', () => {
  it('finds users and groups by name or number', () => {
    expect(findAccount('pitcrew', PASSWD)).toEqual({ name: 'pitcrew', uid: 998, gid: 997, home: '/var/lib/pitcrew' });
    expect(findAccount('65534', PASSWD)).toMatchObject({ name: 'nobody', uid: 65534 });
    expect(findAccount('4242', PASSWD)).toEqual({ name: '4242', uid: 4242, gid: 4242, home: '/' });
    expect(findAccount('ghost', PASSWD)).toBeUndefined();
    expect(findGroup('ops', GROUP)).toEqual({ name: 'ops', gid: 1200 });
    expect(findGroup('1300', GROUP)).toEqual({ name: '1300', gid: 1300 });
    expect(findGroup('ghosts', GROUP)).toBeUndefined();
  });

  it('refuses root unless told what to do', () => {
    expect(rootRefusal(0, undefined, false)).toBe(ROOT_REFUSAL);
    expect(rootRefusal(0, 'pitcrew', false)).toBeUndefined();
    expect(rootRefusal(0, undefined, true)).toBeUndefined();
    expect(rootRefusal(1000, undefined, false)).toBeUndefined();
  });
});
