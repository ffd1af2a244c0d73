import { readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach } from 'vitest';
import type { ExecutionResult } from '../../src/agents/protocol.js';
import type { RunnerSettings } from '../runner.js';
import { RunDirs } from '../run-dirs.js';
import { DirectLauncher } from '../launcher.js';
import { SCRIPT_PATH } from '../environment.js';
import { statFields } from '../process-group.js';

/** A fresh directory removed after the test. */
export function useTempDirs(): () => Promise<string> {
  const made: string[] = [];
  afterEach(async () => {
    await Promise.all(made.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });
  return async () => {
    const dir = await mkdtemp(join(tmpdir(), 'pitcrew-agent-test-'));
    made.push(dir);
    return dir;
  };
}

export function runnerSettings(workDir: string, overrides: Partial<RunnerSettings> = {}): RunnerSettings {
  return {
    launcher: new DirectLauncher(),
    runDirs: new RunDirs(workDir),
    maxOutputBytes: 1024 * 1024,
    maxArtifactBytes: 5 * 1024 * 1024,
    baseEnv: { PATH: SCRIPT_PATH, HOME: '/root', LANG: 'C.UTF-8', USER: 'root', LOGNAME: 'root' },
    killGraceMs: 5000,
    drainMs: 2000,
    ...overrides,
  };
}

/** True while the process exists and is not a zombie (a container's pid 1 may never reap it). */
export function isAlive(pid: number): boolean {
  const state = statFields(pid)?.[0];
  return state !== undefined && state !== 'Z';
}

/** True while some live (not zombie) process belongs to the process group. */
export function isGroupAlive(pgid: number): boolean {
  // Field 5 is the process group; a process that ended while we looked is not alive.
  return readdirSync('/proc').some((entry) => /^[0-9]+$/.test(entry) && Number(statFields(entry)?.[2]) === pgid && isAlive(Number(entry)));
}

/** Resolves when `condition` holds, checking at each turn of the event loop (no fixed sleeps). */
export async function waitFor(condition: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export function finishedResult(executionId: string, overrides: Partial<ExecutionResult> = {}): ExecutionResult {
  return {
    executionId, ending: 'exited', exitCode: 0, signal: null, reason: null, startedAt: 1, finishedAt: 2,
    stdout: 'ok\n', stderr: '', stdoutTruncated: false, stderrTruncated: false, artifacts: [], artifactsTruncated: false,
    ...overrides,
  };
}
