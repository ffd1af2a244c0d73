import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { waitFor } from './wait.js';

export interface CommandResult {
  code: number;
  stdout: string;
  stderr: string;
}

/**
 * One bash session, as in a terminal: commands run one after the other in the same shell, so what
 * one exports the next sees. Each command's stdin is /dev/null (a terminal's would be the keyboard;
 * here nothing may swallow the commands that follow).
 */
export class Terminal {
  private readonly shell: ChildProcessWithoutNullStreams;
  private stdout = '';
  private stderr = '';

  constructor(cwd: string, env: NodeJS.ProcessEnv) {
    this.shell = spawn('bash', ['--noprofile', '--norc', '-s'], { cwd, env, stdio: ['pipe', 'pipe', 'pipe'] });
    this.shell.stdout.on('data', (chunk: Buffer) => (this.stdout += chunk.toString()));
    this.shell.stderr.on('data', (chunk: Buffer) => (this.stderr += chunk.toString()));
  }

  async run(command: string, timeoutMs = 60_000): Promise<CommandResult> {
    const marker = `__end_of_command_${randomUUID()}__`;
    this.stdout = '';
    this.stderr = '';
    // The marker starts a line of its own on both streams, whether or not the output ended one.
    this.shell.stdin.write(`{ ${command}\n} </dev/null\nprintf '\\n${marker} %s\\n' "$?"; printf '\\n${marker}\\n' >&2\n`);
    const ended = new RegExp(`\\n${marker} ([0-9]+)\\n$`);
    const { code } = await waitFor(() => {
      if (this.shell.exitCode !== null) throw new Error(`the shell exited (${this.shell.exitCode}): ${this.stderr}`);
      const match = ended.exec(this.stdout);
      return match && this.stderr.endsWith(`\n${marker}\n`) ? { code: Number(match[1]) } : undefined;
    }, `the command to finish: ${command}`, timeoutMs);
    return { code, stdout: this.stdout.replace(ended, ''), stderr: this.stderr.slice(0, -(marker.length + 2)) };
  }

  /** The session's environment now, exports included. */
  async environment(): Promise<Record<string, string>> {
    const { stdout } = await this.run('env -0');
    return Object.fromEntries(stdout.split('\0').filter(Boolean).map((entry) => [entry.slice(0, entry.indexOf('=')), entry.slice(entry.indexOf('=') + 1)]));
  }

  close(): void {
    this.shell.stdin.end();
  }
}

/**
 * The commands of a shell block: comment lines (the expected output) dropped, a command running on
 * over lines ending in a backslash or inside single quotes kept whole.
 */
export function shellCommands(block: string): string[] {
  const commands: string[] = [];
  let current: string[] = [];
  let quoted = false;
  for (const line of block.split('\n')) {
    if (current.length === 0 && (line.trim() === '' || line.trimStart().startsWith('#'))) continue;
    current.push(line);
    quoted = (line.split("'").length - 1) % 2 === 1 ? !quoted : quoted;
    if (!quoted && !line.endsWith('\\')) {
      commands.push(current.join('\n'));
      current = [];
    }
  }
  if (current.length > 0) throw new Error(`a command in this block never ends (an open quote or a trailing backslash):\n${current.join('\n')}`);
  return commands;
}
