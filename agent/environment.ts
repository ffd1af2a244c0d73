/*
 * The environment a script runs with: a small clean base, the event's variables, the PITCREW_*
 * context. Nothing of the agent's own environment leaks in (it may hold the API key).
 */

export const SCRIPT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/**
 * Names the agent never takes from the service, mirroring src/ingress/env.ts: the service already
 * drops them, and the agent checks again so that a compromised service cannot preload a library
 * into a script whose commands the allowlist approved.
 */
const RESERVED_NAMES = new Set([
  'PATH', 'HOME', 'SHELL', 'USER', 'LOGNAME', 'PWD', 'OLDPWD', 'TMPDIR', 'IFS', 'ENV', 'BASH_ENV',
  'CDPATH', 'GLOBIGNORE', 'SHELLOPTS', 'BASHOPTS', 'PS1', 'PS2', 'PS4', 'PROMPT_COMMAND', 'HISTFILE',
  'TERM', 'LANG', 'LANGUAGE', 'NLSPATH', 'GCONV_PATH', 'HOSTALIASES', 'LOCALDOMAIN', 'RES_OPTIONS',
  'MALLOC_CHECK_', 'MALLOC_PERTURB_', 'NODE_OPTIONS', 'NODE_PATH', 'PYTHONPATH', 'PYTHONHOME',
  'PYTHONSTARTUP', 'PYTHONINSPECT', 'PERL5LIB', 'PERL5OPT', 'PERLLIB', 'RUBYLIB', 'RUBYOPT',
  'PSModulePath', 'SSL_CERT_FILE', 'SSL_CERT_DIR', 'http_proxy', 'https_proxy', 'HTTP_PROXY',
  'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'no_proxy', 'SUDO_ASKPASS', 'EDITOR', 'VISUAL', 'PAGER',
]);
const RESERVED_PREFIXES = ['LD_', 'DYLD_', 'BASH_FUNC_', 'LC_', 'GLIBC_', 'GIT_'];
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export interface RunUser {
  name: string;
  home: string;
}

export function baseEnvironment(user: RunUser): Record<string, string> {
  return { PATH: SCRIPT_PATH, HOME: user.home, LANG: 'C.UTF-8', USER: user.name, LOGNAME: user.name };
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
    const acceptable = IDENTIFIER.test(name) && !value.includes('\0') && !RESERVED_NAMES.has(name) && !RESERVED_PREFIXES.some((p) => name.startsWith(p))
      && name.startsWith('PITCREW_') === fromContext && name !== 'PITCREW_ARTIFACTS';
    if (acceptable) env[name] = value;
    else skipped.push(name);
  };
  for (const [name, value] of Object.entries(eventEnv)) add(name, value, false);
  for (const [name, value] of Object.entries(context)) add(name, value, true);
  if (artifactsDir !== undefined) env.PITCREW_ARTIFACTS = artifactsDir;
  return { env, skipped };
}
