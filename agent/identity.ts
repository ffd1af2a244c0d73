import { lchown, readdir } from 'node:fs/promises';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/*
 * Who the agent runs as. Node has no getpwnam, so users and groups come from /etc/passwd and
 * /etc/group (NSS sources such as LDAP are not consulted: give numeric ids for those).
 */

export interface Account {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

export interface Group {
  name: string;
  gid: number;
}

export const ROOT_REFUSAL = 'pitcrew-agent refuses to run as root; pass --run-as USER (the agent drops to that user) or --allow-root';

/** Why the agent must not start with these settings, or undefined. */
export function rootRefusal(uid: number, runAs: string | undefined, allowRoot: boolean): string | undefined {
  return uid === 0 && runAs === undefined && !allowRoot ? ROOT_REFUSAL : undefined;
}

export function parsePasswd(text: string): Account[] {
  return records(text, 7).map(([name, , uid, gid, , home]) => ({ name: name!, uid: Number(uid), gid: Number(gid), home: home! }));
}

export function parseGroups(text: string): Group[] {
  return records(text, 4).map(([name, , gid]) => ({ name: name!, gid: Number(gid) }));
}

/** A user by name or numeric uid. */
export function findAccount(user: string, passwd: string): Account | undefined {
  const accounts = parsePasswd(passwd);
  const found = accounts.find((a) => a.name === user);
  if (found || !/^[0-9]+$/.test(user)) return found;
  const uid = Number(user);
  return accounts.find((a) => a.uid === uid) ?? { name: user, uid, gid: uid, home: '/' };
}

/** A group by name or numeric gid. */
export function findGroup(group: string, groups: string): Group | undefined {
  const found = parseGroups(groups).find((g) => g.name === group);
  if (found || !/^[0-9]+$/.test(group)) return found;
  return { name: group, gid: Number(group) };
}

export function readAccount(user: string): Account | undefined {
  return findAccount(user, readSystemFile('/etc/passwd'));
}

export function readGroup(group: string): Group | undefined {
  return findGroup(group, readSystemFile('/etc/group'));
}

/**
 * Irrevocably becomes `account` (with `gid` as the primary group): supplementary groups first,
 * then the group, then the user, since after setuid the process may no longer change groups.
 */
export function dropPrivileges(account: Account, gid = account.gid): void {
  // initgroups exists on POSIX Node but is missing from @types/node 20.
  const posix = process as unknown as { initgroups(user: string, extraGroup: number): void };
  if (/^[0-9]+$/.test(account.name)) process.setgroups!([gid]);
  else posix.initgroups(account.name, gid);
  process.setgid!(gid);
  process.setuid!(account.uid);
  if (process.getuid!() !== account.uid || process.geteuid!() !== account.uid || process.getegid!() !== gid) {
    throw new Error(`could not become ${account.name} (uid ${account.uid}, gid ${gid})`);
  }
}

/** Gives a directory tree to the run-as user, so that it can keep using what root created. */
export async function chownTree(dir: string, uid: number, gid: number): Promise<void> {
  await lchown(dir, uid, gid);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) await chownTree(path, uid, gid);
    else await lchown(path, uid, gid);
  }
}

function records(text: string, fields: number): string[][] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '' && !line.startsWith('#'))
    .map((line) => line.split(':'))
    .filter((parts) => parts.length >= fields && /^[0-9]+$/.test(parts[2]!));
}

function readSystemFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
