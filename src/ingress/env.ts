/**
 * Which payload names may become environment variables of a runbook. Values reach the script as
 * environment, never as script text; these names are refused because they would change how the
 * interpreter, the dynamic linker or the shell itself behaves (DESIGN.md §3).
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
// One test for all of them: a closure over each payload name cost more than the test (bench/README.md).
const RESERVED_PREFIX = new RegExp(`^(?:${RESERVED_PREFIXES.join('|')})`);
// Reserved for the context pitcrew itself gives the script (PITCREW_EXECUTION_ID, ...).
const CONTEXT_PREFIX = 'PITCREW_';

const SHELL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export type EnvRefusal = 'invalid_name' | 'reserved' | 'pitcrew_context' | 'not_scalar' | 'nul_character' | 'duplicate' | 'too_many' | 'too_long' | 'env_full';

export const MAX_ENV_VARIABLES = 1000;
/**
 * Linux refuses to start a process whose environment holds a string ("NAME=value" and its NUL)
 * over 128 KiB (MAX_ARG_STRLEN), or whose arguments and environment together pass a quarter of
 * the stack limit (2 MiB with the usual 8 MiB): spawn fails with E2BIG and the script never runs.
 * Such a variable is left out instead, so the fix still runs with the others; the event keeps it.
 */
export const MAX_ENV_ENTRY_BYTES = 128 * 1024;
export const MAX_ENV_BYTES = 1024 * 1024;

/** Bytes one variable takes in a process's environment. */
export function envEntryBytes(name: string, value: string): number {
  return Buffer.byteLength(name) + 1 + Buffer.byteLength(value) + 1;
}

export const ENV_REFUSAL_TEXT: Record<EnvRefusal, string> = {
  invalid_name: 'not a valid shell variable name (letters, digits and _, not starting with a digit)',
  reserved: 'reserved: it would change how the script process runs',
  pitcrew_context: 'reserved for pitcrew: PITCREW_* variables tell the script about its run (PITCREW_EXECUTION_ID, PITCREW_HOSTNAME…) and only the service sets them',
  not_scalar: 'objects and arrays are not exported; use a string, number or boolean',
  nul_character: 'the value contains a NUL character, which an environment cannot hold',
  duplicate: 'already set by a top-level field of the same name',
  too_many: 'more variables than the 1000 a runbook receives',
  too_long: 'the value is longer than the 128 KiB the kernel passes in one environment variable; the event keeps it',
  env_full: 'the variables before it already fill the 1 MiB a runbook\'s environment holds; the event keeps it',
};

export function isShellIdentifier(name: string): boolean {
  return SHELL_IDENTIFIER.test(name);
}

/** Whether a variable would change how the script's process runs. The agent checks this again. */
export function changesHowProcessRuns(name: string): boolean {
  return RESERVED_NAMES.has(name) || RESERVED_PREFIX.test(name);
}

export function refusalForName(name: string): EnvRefusal | undefined {
  if (!isShellIdentifier(name)) return 'invalid_name';
  if (name.startsWith(CONTEXT_PREFIX)) return 'pitcrew_context';
  if (changesHowProcessRuns(name)) return 'reserved';
  return undefined;
}
