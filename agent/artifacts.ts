import { constants } from 'node:fs';
import { lstat, open, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { ExecutionResult } from '../src/agents/protocol.js';

type Artifact = ExecutionResult['artifacts'][number];

/** protocol.ts ExecutionResult limits. */
const MAX_FILES = 100;
const MAX_NAME = 255;

export interface CollectedArtifacts {
  artifacts: Artifact[];
  /** Something was left out: over the byte limit, over 100 files, a name too long, or not a regular file. */
  truncated: boolean;
}

/**
 * Regular files a diagnostics script left in its artifacts directory (subdirectories included,
 * names relative to it), in name order, while their total size fits `maxBytes`. Symbolic links
 * are never followed: a script must not be able to make the agent read a file through one.
 */
export async function collectArtifacts(dir: string, maxBytes: number): Promise<CollectedArtifacts> {
  const collected: CollectedArtifacts = { artifacts: [], truncated: false };
  let budget = maxBytes;
  for (const name of await listFiles(dir, '', collected)) {
    if (collected.artifacts.length === MAX_FILES || name.length > MAX_NAME) {
      collected.truncated = true;
      continue;
    }
    const content = await readRegularFile(join(dir, name), budget);
    if (content === undefined) {
      collected.truncated = true;
      continue;
    }
    budget -= content.length;
    collected.artifacts.push({ name, base64: content.toString('base64') });
  }
  return collected;
}

async function listFiles(root: string, prefix: string, collected: CollectedArtifacts): Promise<string[]> {
  const entries = await readdir(join(root, prefix), { withFileTypes: true }).catch(() => []);
  const names: string[] = [];
  for (const entry of entries.sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const name = prefix ? `${prefix}/${entry.name}` : entry.name;
    if (entry.isDirectory()) names.push(...(await listFiles(root, name, collected)));
    else if (entry.isFile()) names.push(name);
    else collected.truncated = true;
  }
  return names;
}

/** The file's bytes if it is still a regular file and fits `budget`; undefined otherwise. */
async function readRegularFile(path: string, budget: number): Promise<Buffer | undefined> {
  const stat = await lstat(path).catch(() => undefined);
  if (!stat?.isFile() || stat.size > budget) return undefined;
  const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!handle) return undefined;
  try {
    // One byte more than expected: a file still growing is left out rather than cut.
    const buffer = Buffer.alloc(stat.size + 1);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return bytesRead > stat.size ? undefined : buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
