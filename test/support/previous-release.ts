import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** previous-release.json: the release this tree must run beside (docs/operations.md, Releasing). */
export interface PreviousRelease {
  version: string;
  commit: string;
}

export interface PreviousBuild extends PreviousRelease {
  root: string;
  /** Its `pitcrew` command. */
  bin: string;
  /** Its agent, bundled as it shipped. */
  agentBundle: string;
  /** Its migrations, oldest first, read from its own source. */
  migrations: string[];
}

export function previousRelease(): PreviousRelease {
  const { version, commit } = JSON.parse(fs.readFileSync(path.join(root, 'previous-release.json'), 'utf8')) as PreviousRelease;
  return { version, commit };
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();

/**
 * The previous release, taken from git history and built (server and agent; no web UI), once per
 * commit and checkout: later runs reuse the build in the temporary directory. The build runs on this
 * checkout's node_modules through a link, so the checkout is part of its name: a build kept from a
 * checkout since deleted (a CI runner's earlier clone, its temporary directory kept) would link to
 * nothing, and its server would exit at its first import.
 */
export async function buildPreviousRelease(): Promise<PreviousBuild> {
  const release = previousRelease();
  const modules = fs.realpathSync(path.join(root, 'node_modules'));
  const checkout = createHash('sha256').update(modules).digest('hex').slice(0, 12);
  const dir = path.join(os.tmpdir(), `pitcrew-release-${release.commit}-${checkout}`);
  if (!fs.existsSync(path.join(dir, '.built'))) await build(release.commit, dir, modules);
  if (!fs.existsSync(path.join(dir, 'node_modules/.package-lock.json'))) {
    throw new Error(`the previous release's build in ${dir} links to no installed node_modules: remove that directory and run again`);
  }
  return {
    ...release,
    root: dir,
    bin: path.join(dir, 'bin/pitcrew.js'),
    agentBundle: path.join(dir, 'dist/pitcrew-agent.mjs'),
    migrations: migrationNames(fs.readFileSync(path.join(dir, 'src/store/migrations.ts'), 'utf8')),
  };
}

const run = promisify(execFile);

async function build(commit: string, dir: string, modules: string): Promise<void> {
  if (git('rev-parse', '--is-shallow-repository') === 'true') {
    throw new Error(`this clone is shallow, so it lacks the previous release ${commit} (previous-release.json): fetch the whole history (git fetch --unshallow, or actions/checkout with fetch-depth: 0)`);
  }
  try {
    git('cat-file', '-e', `${commit}^{commit}`);
  } catch {
    throw new Error(`commit ${commit} named by previous-release.json is not in this clone's history: fetch it, or correct the file`);
  }
  // Built beside, then renamed into place: two test files building at once do not meet half-way.
  const work = fs.mkdtempSync(`${dir}.part-`);
  try {
    await run('sh', ['-c', `git -C '${root}' archive ${commit} | tar -x -C '${work}'`]);
    fs.symlinkSync(modules, path.join(work, 'node_modules'));
    // Server and agent only: the tests need no web UI (the server serves the API without it).
    await run(process.execPath, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'tsconfig.build.json'], { cwd: work });
    await run(process.execPath, ['agent/build.mjs'], { cwd: work });
    fs.writeFileSync(path.join(work, '.built'), `${commit}\n`);
    fs.renameSync(work, dir);
  } catch (error) {
    fs.rmSync(work, { recursive: true, force: true });
    if (fs.existsSync(path.join(dir, '.built'))) return;
    const output = (error as { stdout?: string }).stdout ?? '';
    throw new Error(`building the previous release ${commit} failed: ${String(error)}\n${output}`, { cause: error });
  }
}

/** The keys of the `migrations` record in a release's src/store/migrations.ts. */
export function migrationNames(source: string): string[] {
  return [...source.matchAll(/^\s*'(\d{4}_\w+)':/gm)].map((match) => match[1]!);
}
