import type { Interpreter } from '../runbooks/schema.js';
import { refusalForName } from './env.js';

/*
 * The environment variables a runbook script reads, so that Run now can offer them as payload
 * fields. A reading of the text, not of the language: it may list a name the script sets itself
 * in a way not recognised here, and a person leaves that field empty. Names no payload can set
 * (PATH, PITCREW_*: env.ts) are left out.
 */

const NAME = '[A-Za-z_][A-Za-z0-9_]*';

/** `$Name` and `${Name}` (also `${Name:-default}`, `${#Name}`). */
const SHELL_READ = new RegExp(`\\$\\{?#?(${NAME})`, 'g');
/** `Name=`, `export Name=`, `local Name`, `for Name in`, `read [-r] Name…`: the script's own variables. */
const SHELL_SET = [
  new RegExp(`(?:^|[\\s;&|(])(?:(?:export|local|readonly|declare|typeset)(?:\\s+-\\w+)*\\s+)?(${NAME})\\+?=`, 'gm'),
  new RegExp(`\\b(?:local|declare|typeset)(?:\\s+-\\w+)*((?:\\s+${NAME})+)\\s*(?:$|[;&|])`, 'gm'),
  new RegExp(`\\bfor\\s+(${NAME})\\s+in\\b`, 'g'),
  new RegExp(`\\bread(?:\\s+-\\w+(?:\\s+[^-\\s]\\S*)?)*((?:\\s+${NAME})+)`, 'g'),
];
/** What the shell sets itself (bash's manual, "Shell Variables"). */
const SHELL_OWN = new Set(['RANDOM', 'SECONDS', 'LINENO', 'UID', 'EUID', 'PPID', 'BASHPID', 'HOSTNAME', 'HOSTTYPE', 'OSTYPE', 'MACHTYPE', 'OPTARG', 'OPTIND', 'OPTERR', 'REPLY', 'PIPESTATUS', 'FUNCNAME', 'BASH_SOURCE', 'BASH_VERSION', 'GROUPS', 'EPOCHSECONDS', 'EPOCHREALTIME', 'SRANDOM']);

/** `$env:Name` and `${env:Name}`, PowerShell's environment drive. */
const PWSH_READ = new RegExp(`\\$\\{?env:(${NAME})`, 'gi');
/** `os.environ['Name']`, `os.environ.get("Name")`, `os.getenv('Name')`, `environ["Name"]`. */
const PYTHON_READ = new RegExp(`\\b(?:environ\\s*\\[|environ\\.get\\s*\\(|getenv\\s*\\()\\s*['"](${NAME})['"]`, 'g');

/** The names the script reads from its environment, in the order it first reads them. */
export function scriptVariables(script: string, interpreter: Interpreter = 'sh'): string[] {
  const read = interpreter === 'pwsh' ? matches(script, PWSH_READ) : interpreter === 'python' ? matches(script, PYTHON_READ) : shellReads(script);
  return [...new Set(read)].filter((name) => refusalForName(name) === undefined);
}

function shellReads(script: string): string[] {
  const own = new Set(SHELL_SET.flatMap((pattern) => matches(script, pattern).flatMap((names) => names.trim().split(/\s+/))));
  return matches(script, SHELL_READ).filter((name) => !own.has(name) && !SHELL_OWN.has(name));
}

function matches(text: string, pattern: RegExp): string[] {
  return [...text.matchAll(pattern)].map((match) => match[1]!);
}
