import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { maskedCommandLine, parseCommandLine, type AgentOptions } from './options.js';
import { useTempDirs } from './testing/helpers.js';

const tempDir = useTempDirs();
const FINGERPRINT = 'ab'.repeat(32);

function options(argv: string[], env = {}, isRoot = false): AgentOptions {
  const parsed = parseCommandLine(argv, { HOME: '/home/ops', ...env }, isRoot);
  if (parsed.kind !== 'run') throw new Error(`expected options, got ${JSON.stringify(parsed)}`);
  return parsed.options;
}

function error(argv: string[]): string {
  const parsed = parseCommandLine(argv, { HOME: '/home/ops' }, false);
  if (parsed.kind !== 'error') throw new Error(`expected an error, got ${parsed.kind}`);
  return parsed.message;
}

describe('parseCommandLine', () => {
  it('reads the fixed command line', () => {
    const parsed = options(['--server', 'https://pitcrew.example.com:8443', '--api-key', 'k', '--hostname', 'web-1', '--tags', 'web,eu', '--tags', 'prod',
      '--server-fingerprint', FINGERPRINT, '--run-as', 'pitcrew', '--allow', 'df *', '--allow', 'systemctl restart *']);
    expect(parsed).toMatchObject({
      apiKey: 'k', hostname: 'web-1', tags: ['web', 'eu', 'prod'], runAs: 'pitcrew', allow: ['df *', 'systemctl restart *'],
      trust: { kind: 'pin', fingerprint: 'AB:'.repeat(31) + 'AB' }, allowRoot: false, maxOutputBytes: 1048576, maxArtifactBytes: 5242880,
      stateDir: '/home/ops/.local/state/pitcrew-agent', workDir: '/home/ops/.local/state/pitcrew-agent/work', heartbeatSeconds: undefined,
      scriptPath: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    });
    expect(options(['--server', 'https://s', '--script-path', '/opt/java/bin:/usr/bin:/bin']).scriptPath).toBe('/opt/java/bin:/usr/bin:/bin');
    expect(parsed.server.href).toBe('https://pitcrew.example.com:8443/');
  });

  it('takes the API key and state directory from the environment', () => {
    expect(options(['--server', 'https://s'], { PITCREW_API_KEY: 'from-env', PITCREW_AGENT_STATE_DIR: '/srv/agent' })).toMatchObject({ apiKey: 'from-env', stateDir: '/srv/agent', workDir: '/srv/agent/work' });
    expect(options(['--server', 'https://s'], {}, true).stateDir).toBe('/var/lib/pitcrew-agent');
  });

  it('replaces an enrolled host only when told (--replace)', () => {
    expect(options(['--server', 'https://pitcrew.example.com:8443']).replace).toBe(false);
    expect(options(['--server', 'https://pitcrew.example.com:8443', '--replace']).replace).toBe(true);
    expect(error(['--server', 'https://pitcrew.example.com:8443', '--replace=yes'])).toMatch(/--replace/);
  });

  it('accepts `agent` as a leading word (pitcrew agent ...)', () => {
    expect(options(['agent', '--server', 'https://s']).server.hostname).toBe('s');
  });

  it('allows plain http only on loopback with --insecure', () => {
    expect(options(['--server', 'http://127.0.0.1:8080', '--insecure']).trust).toEqual({ kind: 'plain' });
    expect(options(['--server', 'http://[::1]:8080', '--insecure']).trust).toEqual({ kind: 'plain' });
    expect(error(['--server', 'http://127.0.0.1:8080'])).toContain('the agent connects over TLS only');
    expect(error(['--server', 'http://10.0.0.5:8080', '--insecure'])).toContain('only with --insecure and a server on this machine');
  });

  it('reads a CA file', async () => {
    const file = join(await tempDir(), 'ca.pem');
    await writeFile(file, '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n');
    expect(options(['--server', 'https://s', '--ca-file', file]).trust).toMatchObject({ kind: 'ca' });
    expect(error(['--server', 'https://s', '--ca-file', '/nonexistent.pem'])).toContain('cannot be read');
  });

  it.each([
    [[], '--server is required'],
    [['--server', 'pitcrew:8443'], 'must start with https://'],
    [['--server', 'not a url'], 'is not a URL'],
    [['--server', 'https://s', '--ca-file', 'x', '--server-fingerprint', FINGERPRINT], 'either --ca-file or --server-fingerprint'],
    [['--server', 'https://s', '--server-fingerprint', 'abc'], '64 hex digits'],
    [['--server', 'https://s', '--hostname', 'bad name'], 'is not a valid host name'],
    [['--server', 'https://s', '--tags', 'ok,bad tag'], 'tag "bad tag" is not valid'],
    [['--server', 'https://s', '--max-output', '1e6'], '--max-output must be a whole number'],
    [['--server', 'https://s', '--heartbeat-seconds', '0'], '--heartbeat-seconds must be a whole number from 1 to 3600'],
    [['--server', 'https://s', '--allow', ' '], '--allow needs a pattern'],
    // An empty or relative entry is the working directory, where the script's own files are.
    [['--server', 'https://s', '--script-path', '/usr/bin::/bin'], 'an empty entry is not an absolute directory'],
    [['--server', 'https://s', '--script-path', 'bin:/usr/bin'], '"bin" is not an absolute directory'],
    [['--server', 'https://s', '--bogus'], "Unknown option '--bogus'"],
    [['--server', 'https://s', 'extra'], 'unexpected argument "extra"'],
  ])('refuses %j', (argv, message) => {
    expect(error(argv)).toContain(message);
  });

  it('answers --help and --version', () => {
    expect(parseCommandLine(['--help'], {}, false)).toEqual({ kind: 'help' });
    expect(parseCommandLine(['--version'], {}, false)).toEqual({ kind: 'version' });
  });
});

describe('maskedCommandLine', () => {
  it('replaces the value of --api-key, in both forms, and nothing else', () => {
    const key = 'f'.repeat(64);
    expect(maskedCommandLine(['node', 'pitcrew-agent.mjs', '--server', 'https://s', '--api-key', key, '--hostname', 'web-1'])).toBe('node pitcrew-agent.mjs --server https://s --api-key [REDACTED] --hostname web-1');
    expect(maskedCommandLine(['node', 'pitcrew.js', 'agent', `--api-key=${key}`])).toBe('node pitcrew.js agent --api-key=[REDACTED]');
    expect(maskedCommandLine(['node', 'pitcrew-agent.mjs', '--server', 'https://s'])).toBeUndefined();
  });
});
