import { describe, expect, it } from 'vitest';
import { MASKED, masked, secretsOf } from './mask.js';

describe('masking an audit entry', () => {
  it('masks fields named like secrets, however deep, and keeps what only names one', () => {
    const view = {
      name: 'prod', apiKey: 'k1', api_key: 'k2', token: 't', clientSecret: 's', password: 'p', privateKey: 'pk', key: 'x',
      config: { smtp: { password: 'p2', passwordSet: true, username: 'ops' } },
      secret: { accessKeyId: 'AKIA', secretAccessKey: 'abc' },
      keyId: 'id-1', hostKey: 'ssh-ed25519 AAAA', tokenName: 'ci', hint: 'af78', secretSet: false, token_expires: null,
    };
    expect(masked(view, [])).toEqual({
      name: 'prod', apiKey: MASKED, api_key: MASKED, token: MASKED, clientSecret: MASKED, password: MASKED, privateKey: MASKED, key: MASKED,
      config: { smtp: { password: MASKED, passwordSet: true, username: 'ops' } },
      secret: MASKED,
      keyId: 'id-1', hostKey: 'ssh-ed25519 AAAA', tokenName: 'ci', hint: 'af78', secretSet: false, token_expires: null,
    });
  });

  it('masks a secret the request carried wherever the view echoes it, under any name', () => {
    const body = { name: 'git', credential: { token: 'ghp_0123456789' }, config: { webhookUrl: 'x', sshPassphrase: 'hunter22' } };
    const secrets = secretsOf(body, ['pct_bearer']);
    expect(secrets.sort()).toEqual(['ghp_0123456789', 'hunter22', 'pct_bearer'].sort());
    expect(masked({ url: 'https://ghp_0123456789@git.example.com/ops.git', note: 'hunter22', list: ['pct_bearer'], n: 3 }, secrets))
      .toEqual({ url: `https://${MASKED}@git.example.com/ops.git`, note: MASKED, list: [MASKED], n: 3 });
  });

  it('masks a short secret only where it stands whole', () => {
    expect(masked({ a: 'eu', b: 'eu-west-1' }, secretsOf({ password: 'eu' }))).toEqual({ a: MASKED, b: 'eu-west-1' });
  });
});
