/*
 * The environment a script runs with: a small clean base, the event's variables, the PITCREW_*
 * context. Nothing of the agent's own environment leaks in (it may hold the API key).
 */

import { changesHowProcessRuns, isShellIdentifier } from '../src/ingress/env.js';

export const SCRIPT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

// The agent checks names again, with the service's own list (src/ingress/env.ts, bundled in), so
// that a compromised service cannot preload a library into a script the allowlist approved.

export interface RunUser {
  name: string;
  home: string;
}

/** `path`: the agent's --script-path, SCRIPT_PATH unless the operator gave another. */
export function baseEnvironment(user: RunUser, path = SCRIPT_PATH): Record<string, string> {
  return { PATH: path, HOME: user.home, LANG: 'C.UTF-8', USER: user.name, LOGNAME: user.name };
}

export interface ScriptEnvironment {
  env: Record<string, string>;
  /** Names left out; logged by name only, never with their values. */
  skipped: string[];
}

export function scriptEnvironment(
  base: Record<string, string>,
  eventEnv: Record<string, string>,
  context: Record<string, string>,
  artifactsDir: string | undefined,
): ScriptEnvironment {
  const env = { ...base };
  const skipped: string[] = [];
  const add = (name: string, value: string, fromContext: boolean) => {
    const acceptable = isShellIdentifier(name) && !value.includes('\0') && !changesHowProcessRuns(name)
      && name.startsWith('PITCREW_') === fromContext && name !== 'PITCREW_ARTIFACTS';
    if (acceptable) env[name] = value;
    else skipped.push(name);
  };
  for (const [name, value] of Object.entries(eventEnv)) add(name, value, false);
  for (const [name, value] of Object.entries(context)) add(name, value, true);
  if (artifactsDir !== undefined) env.PITCREW_ARTIFACTS = artifactsDir;
  return { env, skipped };
}
