import { accessSync, constants } from 'node:fs';
import { join } from 'node:path';
/** The interpreters a runbook names (rules/schema.ts, agents/protocol.ts). */
export type Interpreter = 'sh' | 'bash' | 'python' | 'pwsh';

export interface Program {
  path: string;
  /** Arguments before the script file. */
  args: string[];
  /** The script file's extension; pwsh -File insists on .ps1. */
  extension: string;
}

const PROGRAMS: Record<Interpreter, { name: string; args: string[]; extension: string }> = {
  sh: { name: '/bin/sh', args: [], extension: '.sh' },
  bash: { name: 'bash', args: [], extension: '.sh' },
  python: { name: 'python3', args: [], extension: '.py' },
  pwsh: { name: 'pwsh', args: ['-NoProfile', '-NonInteractive', '-File'], extension: '.ps1' },
};

/** The program for an interpreter, looked up in the scripts' PATH; a reason when it is not there. */
export function resolveInterpreter(interpreter: Interpreter, searchPath: string): Program | { missing: string } {
  const { name, args, extension } = PROGRAMS[interpreter];
  const candidates = name.startsWith('/') ? [name] : searchPath.split(':').filter(Boolean).map((dir) => join(dir, name));
  const path = candidates.find(isExecutable);
  if (path) return { path, args, extension };
  return { missing: `the ${interpreter} interpreter (${name}) is not installed on this host (looked in ${name.startsWith('/') ? name : searchPath}); install it or choose another interpreter for the runbook` };
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}
