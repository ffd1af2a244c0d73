import type { LookupAddress, LookupOptions } from 'node:dns';
import fs from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import { labelOf, RunbookFetchError, type RepositoryLabel } from './errors.js';
import type { StoredCredential } from './schema.js';
import { hostKeyAlias } from './ssh-material.js';
import type { RepositoryUrl } from './url.js';

/**
 * Where pitcrew may connect on a tenant's behalf: egress/policy.ts's EgressPolicy, passed in by
 * server/app.ts (egress/ sits above runbooks/). Only addresses it permits are connected to.
 */
export interface EgressGate {
  refusesHost(hostname: string): string | undefined;
  lookup(hostname: string, options: LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void;
}

/** How git runs for a repository's server: its URL, its whole environment, and what its words must not show. */
export interface Connection {
  url: string;
  env: Record<string, string>;
  /** Text with the credential (and pieces of it) masked, for messages and logs. */
  mask(text: string): string;
  /** Removes the key files; call once the git commands are done. */
  close(): Promise<void>;
}

export interface ConnectionTarget extends RepositoryLabel {
  url: string;
  parsed: RepositoryUrl;
  credential: StoredCredential | undefined;
  knownHosts: string | null;
}

export const MASK = '********';

/**
 * Git's configuration for every command, through GIT_CONFIG_COUNT (never argv, which any local
 * user can read in the process list): only https and ssh, no hooks, no redirects (a redirect
 * would reach a host the egress check never saw), no background maintenance outliving the call.
 */
export function gitEnv(base: Record<string, string>, config: Array<[string, string]>): Record<string, string> {
  const all: Array<[string, string]> = [
    ['protocol.allow', 'never'],
    ['protocol.https.allow', 'always'],
    ['protocol.ssh.allow', 'always'],
    ['protocol.version', '2'],
    ['core.hooksPath', '/dev/null'],
    ['http.followRedirects', 'false'],
    ['maintenance.auto', 'false'],
    ['gc.auto', '0'],
    ...config,
  ];
  const env: Record<string, string> = { ...base, GIT_CONFIG_COUNT: String(all.length) };
  all.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/**
 * Resolves the repository's host once, under the egress policy, and pins git to the addresses
 * checked (curl's resolve list for HTTPS; ssh's HostName, with the host kept as HostKeyAlias for
 * the host key), so that a name answering differently the second time (DNS rebinding) gains
 * nothing. The SSH key and known_hosts go into a private directory of their own, removed by close().
 */
export async function openConnection(target: ConnectionTarget, options: { base: Record<string, string>; egress: EgressGate; scratchDir: string; caFile: string | undefined; connectTimeoutSeconds: number }): Promise<Connection> {
  const addresses = await permittedAddresses(target, options.egress);
  const secrets = secretsOf(target.credential);
  const mask = (text: string) => secrets.reduce((masked, secret) => masked.split(secret).join(MASK), text);
  if (target.parsed.transport === 'https') {
    const config: Array<[string, string]> = [];
    if (isIP(target.host) === 0) config.push(['http.curloptResolve', `${target.host}:${target.port}:${addresses.map(bracketed).join(',')}`]);
    if (options.caFile) config.push(['http.sslCAInfo', options.caFile]);
    if (target.credential?.kind === 'token') config.push(['http.extraHeader', `Authorization: Basic ${basic(target.credential)}`]);
    return { url: target.url, env: gitEnv(options.base, config), mask, close: async () => undefined };
  }
  const dir = await fs.mkdtemp(path.join(options.scratchDir, 'ssh-'));
  try {
    const knownHosts = path.join(dir, 'known_hosts');
    await fs.writeFile(knownHosts, `${target.knownHosts ?? ''}\n`, { mode: 0o600, flag: 'wx' });
    let identity = 'none';
    if (target.credential?.kind === 'ssh_key') {
      identity = path.join(dir, 'key');
      await fs.writeFile(identity, target.credential.sshPrivateKey, { mode: 0o600, flag: 'wx' });
    }
    const ssh = [
      'ssh', '-F', '/dev/null',
      '-o', 'BatchMode=yes', '-o', 'StrictHostKeyChecking=yes', '-o', 'UpdateHostKeys=no', '-o', 'CheckHostIP=no',
      '-o', `UserKnownHostsFile=${quote(knownHosts)}`, '-o', 'GlobalKnownHostsFile=/dev/null',
      '-o', `HostKeyAlias=${quote(hostKeyAlias(target.host, target.port))}`, '-o', `HostName=${addresses[0]!}`,
      '-o', 'IdentitiesOnly=yes', '-o', `IdentityFile=${quote(identity)}`, '-o', 'IdentityAgent=none',
      '-o', 'PasswordAuthentication=no', '-o', 'KbdInteractiveAuthentication=no',
      '-o', 'ProxyCommand=none', '-o', 'ProxyJump=none', '-o', 'ControlMaster=no', '-o', 'ControlPath=none', '-o', 'ForwardAgent=no',
      '-o', `ConnectTimeout=${Math.max(1, Math.ceil(options.connectTimeoutSeconds))}`,
    ].join(' ');
    const env = gitEnv({ ...options.base, GIT_SSH_COMMAND: ssh, GIT_SSH_VARIANT: 'ssh' }, []);
    return { url: target.url, env, mask, close: () => fs.rm(dir, { recursive: true, force: true }) };
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    throw error;
  }
}

async function permittedAddresses(target: ConnectionTarget, egress: EgressGate): Promise<string[]> {
  const unreachable = (why: string) => new RunbookFetchError('unreachable', `${labelOf(target)} could not be reached: ${why}`);
  if (isIP(target.host) !== 0) {
    const refused = egress.refusesHost(target.host);
    if (refused) throw unreachable(refused);
    return [target.host];
  }
  return new Promise((resolve, reject) => {
    egress.lookup(target.host, { all: true }, (error, found) => {
      if (error) {
        const dns = error.code === 'ENOTFOUND' || error.code === 'EAI_AGAIN' || error.code === 'ENODATA';
        return reject(unreachable(dns ? `the host ${target.host} was not found (DNS ${error.code})` : error.message));
      }
      resolve((found as LookupAddress[]).map((entry) => entry.address));
    });
  });
}

function basic(credential: { token: string; username: string }): string {
  return Buffer.from(`${credential.username}:${credential.token}`).toString('base64');
}

/** The credential's values as git's words could show them: whole, as the Basic header, and each line of a key. */
function secretsOf(credential: StoredCredential | undefined): string[] {
  if (!credential) return [];
  if (credential.kind === 'token') return [basic(credential), credential.token].filter((s) => s.length >= 4);
  return credential.sshPrivateKey.split('\n').map((line) => line.trim()).filter((line) => line.length >= 16 && !line.startsWith('-----'));
}

function bracketed(address: string): string {
  return isIP(address) === 6 ? `[${address}]` : address;
}

/** A word for GIT_SSH_COMMAND, which git runs through the shell. */
function quote(word: string): string {
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
