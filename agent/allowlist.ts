import { splitScript, type SimpleCommand } from './shell-split.js';

/*
 * The command allowlist (--allow PATTERN). A guard against mistakes and against a stolen tenant
 * key being used to run arbitrary commands; not a sandbox: the run-as user's permissions are the
 * real boundary. docs/agent.md explains the rules and their limits.
 */

export type AllowlistVerdict = { allowed: true } | { allowed: false; reason: string };

/** Commands that run code the allowlist cannot see: refused unless a pattern names them. */
const UNCHECKABLE = new Map([
  ['eval', 'eval runs text built at run time'],
  ['exec', 'exec replaces the shell or rewires its files'],
  ['source', 'source runs another file'],
  ['.', '. runs another file'],
  ['trap', 'trap runs its argument as code later'],
  ['alias', 'an alias can rename a command'],
  ['hash', 'hash can point a command name at another program'],
  ['enable', 'enable can load new builtins'],
  ['coproc', 'coproc runs a command the allowlist does not follow'],
]);

/** Builtins with no effect outside the script; allowed without a pattern unless they write a file. */
const HARMLESS = new Set(['true', 'false', ':', 'test', '[', '[[', 'exit', 'return', 'break', 'continue', 'shift', 'set', 'echo', 'printf', 'cd', 'wait', 'unset']);
/** Builtins that assign variables: allowed without a pattern, but their assignments are checked. */
const ASSIGNING = new Set(['export', 'local', 'declare', 'readonly', 'typeset']);

/** Programs that run code given on their standard input (a heredoc or here-string feeds them a script). */
const INTERPRETERS = new Set(['sh', 'bash', 'dash', 'zsh', 'ksh', 'ash', 'busybox', 'python', 'python2', 'python3', 'perl', 'ruby', 'node', 'php', 'pwsh', 'lua', 'tclsh', 'awk', 'gawk', 'mawk']);

/** Variables that change which program a command name runs or what the shell does with text. */
const DANGEROUS_NAME = /^(PATH|IFS|ENV|BASH_ENV|CDPATH|SHELLOPTS|BASHOPTS|GLOBIGNORE|PS4|PROMPT_COMMAND|NODE_OPTIONS|PERL5LIB|PERL5OPT|RUBYOPT|RUBYLIB|LD_\w*|DYLD_\w*|BASH_FUNC_\w*|PYTHON\w*)$/;

const SHELLS = new Set(['sh', 'bash']);
const MAX_QUOTED = 200;

/** Checks a runbook against the patterns. No patterns: no allowlist, everything is allowed. */
export function checkScript(script: string, interpreter: string, patterns: readonly string[]): AllowlistVerdict {
  if (patterns.length === 0) return { allowed: true };
  if (!SHELLS.has(interpreter)) {
    return { allowed: false, reason: `the allowlist (--allow) can check only sh and bash scripts; this ${interpreter} script was not run` };
  }
  const normalised = patterns.map(normalise);
  const { commands, functions, problems } = splitScript(script);
  const problem = problems[0];
  if (problem) return { allowed: false, reason: `line ${problem.line}: ${problem.message}; the allowlist cannot check this script, so it was not run` };
  const defined = new Set(functions);
  for (const command of commands) {
    const reason = checkCommand(command, normalised, defined);
    if (reason) return { allowed: false, reason: `line ${command.line}: ${reason}` };
  }
  return { allowed: true };
}

/** The reason a command is refused, or undefined when it is allowed. */
function checkCommand(command: SimpleCommand, patterns: string[], functions: Set<string>): string | undefined {
  const word = command.words[0];
  const args = word !== undefined && ASSIGNING.has(word) ? command.words.slice(1).filter((arg) => /^[A-Za-z_]/.test(arg)) : [];
  for (const assignment of [...command.assignments, ...args]) {
    const name = /^[A-Za-z_][A-Za-z0-9_]*/.exec(assignment)![0];
    if (DANGEROUS_NAME.test(name) && assignment.length > name.length && !namedByPattern(assignment, patterns)) {
      return `assigning ${name} can change which program a command runs; refused unless a --allow pattern names it (e.g. --allow '${quote(name)}=...')`;
    }
  }
  if (word === undefined) {
    // Only assignments or only a redirection (`> file` empties a file).
    return command.redirections.some(writesFile) && !matchesAny(command.text, patterns) ? notAllowed(command.text) : undefined;
  }
  if (/[$`]/.test(word)) return unchecked(command, patterns, 'its command name is only known when the script runs');
  const why = UNCHECKABLE.get(word);
  if (why) return unchecked(command, patterns, why);
  if (INTERPRETERS.has(word.slice(word.lastIndexOf('/') + 1)) && command.redirections.some((r) => r.operator.includes('<<'))) {
    return unchecked(command, patterns, 'a heredoc or here-string gives an interpreter a script the allowlist does not read');
  }
  // A function of the script runs only commands the check has already seen in its body.
  const builtin = HARMLESS.has(word) || ASSIGNING.has(word) || functions.has(word);
  const harmless = builtin && !command.redirections.some(writesFile) && !(word === 'printf' && command.words.includes('-v'));
  if (harmless || matchesAny(command.text, patterns)) return undefined;
  return notAllowed(command.text);
}

function unchecked(command: SimpleCommand, patterns: string[], why: string): string | undefined {
  if (namedByPattern(command.text, patterns)) return undefined;
  const first = command.words[0] ?? '';
  return `"${quote(command.text)}" cannot be checked by the allowlist (${why}); refused unless a --allow pattern that starts with it names it (e.g. --allow '${quote(first)} *')`;
}

function notAllowed(text: string): string {
  return `"${quote(text)}" is not allowed by any --allow pattern, so the script was not run`;
}

/** A pattern names a construct when it matches and does not start with `*`: `--allow '*'` allows every simple command, never eval. */
function namedByPattern(text: string, patterns: string[]): boolean {
  return patterns.some((pattern) => !pattern.startsWith('*') && globMatch(pattern, text));
}

function matchesAny(text: string, patterns: string[]): boolean {
  return patterns.some((pattern) => globMatch(pattern, text));
}

/** Writes a file: an output redirection other than a descriptor copy or /dev/null. */
function writesFile({ operator, target }: { operator: string; target: string }): boolean {
  if (!operator.includes('>')) return false;
  if (/>&$/.test(operator) && /^(\d+|-)$/.test(target)) return false;
  return !['/dev/null', '/dev/stdout', '/dev/stderr'].includes(target);
}

function normalise(pattern: string): string {
  return pattern.trim().replace(/\s+/g, ' ');
}

function quote(text: string): string {
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/**
 * Whole-text glob match where `*` matches any run of characters (spaces included) and every other
 * character matches itself. Iterative with one backtrack point, so no pattern can make it slow.
 */
export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1;
  let resume = 0;
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.length && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (star >= 0) {
      p = star + 1;
      t = ++resume;
    } else return false;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}
