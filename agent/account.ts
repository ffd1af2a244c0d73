import { constants } from 'node:fs';
import { access, lchown, mkdir, readdir } from 'node:fs/promises';
import { userInfo } from 'node:os';
import { join } from 'node:path';
import type { RunUser } from './environment.js';
import { chownTree, dropPrivileges, readAccount, readGroup } from './identity.js';
import type { AgentOptions } from './options.js';
import { LOCK_ENTRY, LOCK_FILE, lockStateDir, StateDirBusy, type StateLock } from './state-lock.js';

/** The agent cannot start with these settings. Exit code 2: the command line is wrong; 1: the host is not ready. */
export class SetupError extends Error {
  constructor(
    message: string,
    readonly exitCode: 1 | 2,
  ) {
    super(message);
  }
}

type AccountOptions = Pick<AgentOptions, 'runAs' | 'group' | 'stateDir' | 'workDir' | 'hostname'>;

export interface Account {
  user: RunUser;
  /** This agent's hold on its state directory, released when it exits. */
  lock: StateLock;
}

/**
 * Creates the state and work directories, locks the state directory against a second agent, and
 * becomes the user the agent runs as: with --run-as, root hands the directories to that user and
 * then drops to it for good, before any connection.
 */
export async function takeAccount(options: AccountOptions, uid: number): Promise<Account> {
  const group = options.group === undefined ? undefined : readGroup(options.group);
  if (options.group !== undefined && !group) throw new SetupError(`--group ${options.group}: no such group in /etc/group (a numeric gid also works)`, 2);
  if (options.runAs !== undefined) {
    const account = readAccount(options.runAs);
    if (!account) throw new SetupError(`--run-as ${options.runAs}: no such user in /etc/passwd (a numeric uid also works)`, 2);
    if (account.uid === 0) throw new SetupError('--run-as names root; to really run as root, say --allow-root instead', 2);
    const gid = group?.gid ?? account.gid;
    if (uid !== 0 && uid !== account.uid) throw new SetupError(`--run-as ${options.runAs} needs the agent to start as root (it then drops to that user); it runs as uid ${uid}`, 2);
    if (uid !== 0 && gid !== process.getgid!()) throw new SetupError('--group needs the agent to start as root (with --run-as USER)', 2);
    const created = await makeDirectories(options);
    // Before any chown: a directory another agent holds is never handed to this one's user.
    const lock = await lockFor(options, account.name);
    return holding(lock, async () => {
      if (uid === 0) {
        await adoptDirectories(options, created, account.uid, gid);
        dropPrivileges(account, gid);
      }
      await checkWritable(options, account.name);
      return { user: { name: account.name, home: account.home }, lock };
    });
  }
  if (group) {
    if (uid !== 0) throw new SetupError('--group needs the agent to start as root, with --run-as USER (or --allow-root)', 2);
    process.setgroups!([group.gid]);
    process.setgid!(group.gid);
  }
  await makeDirectories(options);
  const me = userInfo();
  const lock = await lockFor(options, me.username);
  return holding(lock, async () => {
    await checkWritable(options, me.username);
    return { user: { name: me.username, home: me.homedir }, lock };
  });
}

/** Runs the rest of the setup under the lock, which a failure releases. */
async function holding<T>(lock: StateLock, rest: () => Promise<T>): Promise<T> {
  try {
    return await rest();
  } catch (error) {
    lock.release();
    throw error;
  }
}

async function lockFor(options: AccountOptions, user: string): Promise<StateLock> {
  try {
    return await lockStateDir(options.stateDir, options.hostname);
  } catch (error) {
    if (error instanceof StateDirBusy) throw new SetupError(error.message, 1);
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EACCES' || code === 'EPERM') throw notWritable(options.stateDir, user);
    throw error;
  }
}

/** The directories this call created (as opposed to ones that were there). */
async function makeDirectories(options: AccountOptions): Promise<Set<string>> {
  const created = new Set<string>();
  for (const dir of [options.stateDir, join(options.stateDir, 'journal'), options.workDir]) {
    const first = await mkdir(dir, { recursive: true, mode: 0o700 }).catch((error: Error) => {
      throw new SetupError(`cannot create ${dir}: ${error.message}; create it, or choose another with --state-dir / --work-dir`, 1);
    });
    if (first !== undefined) created.add(dir);
  }
  return created;
}

const STATE_ENTRIES = new Set(['credentials.json', 'credentials.json.tmp', 'journal', 'work']);

/**
 * Gives the run-as user the agent's directories, and only those: a directory is handed over when
 * it was just created or holds nothing but the agent's own files, so that a mistyped
 * --state-dir /etc never chowns a system directory. Anything else must already be writable.
 */
async function adoptDirectories(options: AccountOptions, created: Set<string>, uid: number, gid: number): Promise<void> {
  const onlyHolds = async (dir: string, accept: (name: string) => boolean) => created.has(dir) || (await readdir(dir)).every(accept);
  const journalDir = join(options.stateDir, 'journal');
  const stateIsOurs = await onlyHolds(options.stateDir, (name) => STATE_ENTRIES.has(name) || LOCK_ENTRY.test(name));
  if (stateIsOurs) {
    await lchown(options.stateDir, uid, gid);
    for (const file of ['credentials.json', LOCK_FILE]) await lchown(join(options.stateDir, file), uid, gid).catch(() => undefined);
  }
  if (await onlyHolds(journalDir, (name) => /^journal\.log(\.tmp)?$/.test(name))) await chownTree(journalDir, uid, gid);
  const workIsOurs = (stateIsOurs && options.workDir === join(options.stateDir, 'work')) || (await onlyHolds(options.workDir, () => false));
  if (workIsOurs) await chownTree(options.workDir, uid, gid);
}

async function checkWritable(options: AccountOptions, user: string): Promise<void> {
  for (const dir of [options.stateDir, join(options.stateDir, 'journal'), options.workDir]) {
    await access(dir, constants.W_OK | constants.X_OK).catch(() => {
      throw notWritable(dir, user);
    });
  }
}

function notWritable(dir: string, user: string): SetupError {
  return new SetupError(`${dir} is not writable by ${user} (uid ${process.getuid!()}); check its owner and that every parent directory lets ${user} through`, 1);
}
