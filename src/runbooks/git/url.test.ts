import { describe, expect, it } from 'vitest';
import { parseRepositoryUrl } from './url.js';

describe('parseRepositoryUrl', () => {
  it.each([
    ['https://github.com/acme/ops.git', { transport: 'https', url: 'https://github.com/acme/ops.git', host: 'github.com', port: 443 }],
    ['https://Git.Example.com:8443/a/b', { transport: 'https', url: 'https://git.example.com:8443/a/b', host: 'git.example.com', port: 8443 }],
    ['https://git.example.com:443/a.git', { transport: 'https', url: 'https://git.example.com/a.git', host: 'git.example.com', port: 443 }],
    ['https://[2001:db8::1]/a.git', { transport: 'https', url: 'https://[2001:db8::1]/a.git', host: '2001:db8::1', port: 443 }],
    // WHATWG reads 0x7f.1 as 127.0.0.1; git is given the same rebuilt URL, so the egress check and git agree on the host.
    ['https://0x7f.1/a.git', { transport: 'https', url: 'https://127.0.0.1/a.git', host: '127.0.0.1', port: 443 }],
    ['ssh://git@github.com/acme/ops.git', { transport: 'ssh', url: 'ssh://git@github.com/acme/ops.git', host: 'github.com', port: 22 }],
    ['ssh://git.example.com:2222/srv/ops.git', { transport: 'ssh', url: 'ssh://git.example.com:2222/srv/ops.git', host: 'git.example.com', port: 2222 }],
    ['ssh://git@[2001:db8::1]:2222/ops.git', { transport: 'ssh', url: 'ssh://git@[2001:db8::1]:2222/ops.git', host: '2001:db8::1', port: 2222 }],
    ['git@github.com:acme/ops.git', { transport: 'ssh', url: 'git@github.com:acme/ops.git', host: 'github.com', port: 22 }],
    ['deploy@10.1.2.3:/srv/git/ops.git', { transport: 'ssh', url: 'deploy@10.1.2.3:/srv/git/ops.git', host: '10.1.2.3', port: 22 }],
  ])('takes %s', (raw, url) => {
    expect(parseRepositoryUrl(raw)).toEqual({ url });
  });

  it.each([
    ['http://github.com/a.git', /in the clear/],
    ['HTTP://github.com/a.git', /in the clear/],
    ['file:///srv/a.git', /uses file:\/\//],
    ['git://github.com/a.git', /uses git:\/\//],
    ['ftp://x/a.git', /uses ftp:\/\//],
    ['ext::sh', /remote helper/],
    ['fd::17', /remote helper/],
    ['/srv/git/a.git', /local path/],
    ['a.git', /local path/],
    ['github.com:acme/ops.git', /a host without a user/],
    ['-oProxyCommand=x', /starts with "-"/],
    ['https://github.com/a b.git', /blanks/],
    ['https://github.com/a\\b.git', /backslash/],
    ['https://user:pass@github.com/a.git', /holds a user name or token/],
    ['https://token@github.com/a.git', /holds a user name or token/],
    ['https://github.com/a.git#x', /query or fragment/],
    ['https://github.com/a.git?', /query or fragment/],
    ['https://under_score.example/a.git', /not a host name/],
    ['ssh://-oProxyCommand=x/a.git', /not a host name/],
    ['ssh://git@host', /not a valid SSH URL/],
    ['ssh://git@host/', /no repository path/],
    ['ssh://git@host:70000/a.git', /port/],
    ['ssh://git:pw@host/a.git', /password/],
    ['ssh://-x@host/a.git', /user name/],
    ['git@host:-a.git', /starting with "-"/],
    ['git@[not-v6]:a.git', /not an IPv6 address/],
  ])('refuses %s', (raw, message) => {
    const parsed = parseRepositoryUrl(raw);
    expect(parsed).toEqual({ problem: expect.stringMatching(message) });
  });
});
