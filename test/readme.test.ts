import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseFingerprint } from '../agent/tls.js';
import { loadConfig } from '../src/config/config.js';
import { spawnAgent } from './support/agents.js';
import { slackShape } from './support/platforms.js';
import { freePort, startServer, type ServerProcess } from './support/process.js';
import { startReceiver, type Receiver } from './support/receivers.js';
import { shellCommands, Terminal, type CommandResult } from './support/terminal.js';
import { waitFor } from './support/wait.js';

/*
 * The README's quick start, run as written: every shell block of the section, in order, in one bash
 * session in a project directory, as a new user would type them. What the test changes, and why:
 *
 * - `npm install && npm start`: the tree is already installed and built (npm test builds it), and
 *   `npm start` would build it again; the test checks that `npm start` is `npm run build` then
 *   `node bin/pitcrew.js server`, and starts that server itself.
 * - The project directory is a temporary one whose package.json and bin/ link to this checkout's,
 *   so ./data (the default PITCREW_DATA_DIR) is a fresh temporary directory.
 * - Ports: two tests may run at once, so the service listens on free ports instead of 8080 and
 *   8443; `localhost:8080` and `localhost:8443` in the commands are replaced by them, and
 *   PITCREW_SERVER (the CLI's default http://localhost:8080) says the same.
 * - Placeholders: the token and API key the README says to export, the channel id, and the Slack
 *   URL, which points at a local receiver with Slack's checks (opened with the README's own
 *   PITCREW_EGRESS_ALLOW_NETWORKS).
 * - The agent runs from the README's line for the user running the test: the first one, or as root
 *   (CI) the one with `--run-as nobody`; its state directory is a temporary one (PITCREW_AGENT_STATE_DIR)
 *   rather than /var/lib/pitcrew-agent, which nobody can reach.
 *
 * A command the README names that does not exist fails its block (bash: `command not found`, 127).
 */

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const readme = fs.readFileSync(path.join(root, 'README.md'), 'utf8');

interface Block {
  lang: string;
  text: string;
}

function quickStartBlocks(): Block[] {
  const start = readme.indexOf('\n## Quick start\n');
  const end = readme.indexOf('\n## ', start + 1);
  expect(start, 'README.md has a "## Quick start" section').toBeGreaterThan(-1);
  return [...readme.slice(start, end).matchAll(/```(\w+)\n([\s\S]*?)```/g)].map((m) => ({ lang: m[1]!, text: m[2]! }));
}

describe('the README quick start, as written', () => {
  let project: string;
  let agentState: string;
  let server: ServerProcess;
  let receiver: Receiver;
  let terminal: Terminal;
  let agent: ChildProcess | undefined;
  let port: number;
  let tlsPort: number;
  const placeholders = new Map<string, string>();

  beforeAll(async () => {
    project = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-readme-'));
    // Where a run-as user can reach the agent's state: the project directory is its owner's alone.
    agentState = fs.mkdtempSync(path.join(os.tmpdir(), 'pitcrew-readme-agent-'));
    fs.chmodSync(agentState, 0o755);
    fs.symlinkSync(path.join(root, 'package.json'), path.join(project, 'package.json'));
    fs.symlinkSync(path.join(root, 'bin'), path.join(project, 'bin'));
    fs.mkdirSync(path.join(project, 'home'));
    [port, tlsPort] = [await freePort(), await freePort()];
    receiver = await startReceiver(slackShape);
    // The Slack stand-in listens on loopback, which the service reaches only when opened.
    server = await startServer({ PORT: String(port), PITCREW_TLS_PORT: String(tlsPort), PITCREW_EGRESS_ALLOW_NETWORKS: '127.0.0.0/8' }, { cwd: project });
    placeholders.set('localhost:8080', `localhost:${port}`);
    placeholders.set('localhost:8443', `localhost:${tlsPort}`);
    placeholders.set('https://hooks.slack.com/services/…', `${receiver.url}/services/T0/B0/readme`);
    terminal = new Terminal(project, {
      // Only the system's directories: a `pitcrew` installed elsewhere must not hide a wrong command.
      PATH: `${path.dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: path.join(project, 'home'),
      PITCREW_SERVER: `http://localhost:${port}`,
      // `npx pitcrew` must find this project's own command: fetching anything would fail here.
      npm_config_offline: 'true',
      npm_config_update_notifier: 'false',
    });
  }, 60_000);

  afterAll(async () => {
    if (agent?.pid !== undefined && agent.exitCode === null) {
      const exited = new Promise((resolve) => agent!.once('exit', resolve));
      process.kill(-agent.pid, 'SIGTERM');
      await exited;
    }
    terminal?.close();
    await server?.stop();
    fs.rmSync(project, { recursive: true, force: true });
    fs.rmSync(agentState, { recursive: true, force: true });
  });

  const api = async (url: string) => {
    const response = await fetch(`http://127.0.0.1:${port}${url}`, { headers: { authorization: `Bearer ${placeholders.get('pct_…')}` } });
    return response.json() as Promise<Record<string, unknown>>;
  };

  function fill(command: string): string {
    let filled = command;
    for (const [placeholder, value] of placeholders) filled = filled.replaceAll(placeholder, value);
    expect(filled, 'a placeholder of the README this test does not fill').not.toMatch(/…|<id>/);
    return filled;
  }

  async function type(command: string): Promise<CommandResult> {
    const result = await terminal.run(fill(command));
    expect(result.code, `\`${command}\` failed:\n${result.stderr}`).toBe(0);
    return result;
  }

  /** The README's shell block, command by command; `after` learns what later commands need. */
  async function typeBlock(block: string, after: (command: string, result: CommandResult) => void = () => undefined): Promise<CommandResult[]> {
    const results: CommandResult[] = [];
    for (const command of shellCommands(block)) {
      const result = await type(command);
      after(command, result);
      results.push(result);
    }
    return results;
  }

  it('runs every command of it, and each does what the README says', async () => {
    expect((await terminal.run('command -v pitcrew')).code, 'a `pitcrew` on PATH would hide a README command that does not work').not.toBe(0);
    let rule: { id: string; trigger: { curl: string } } | undefined;
    let agentLine: string | undefined;
    let fireLine: string | undefined;
    let reply: Record<string, unknown> | undefined;
    const blocks = quickStartBlocks();
    const kinds: string[] = [];
    for (const { lang, text } of blocks) {
      const first = lang === 'sh' ? shellCommands(text)[0]! : '';
      if (lang === 'sh' && first === 'npm install && npm start') {
        kinds.push('start');
        const pkg = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
        expect(pkg.scripts.start).toBe('npm run build && node bin/pitcrew.js server');
      } else if (lang === 'sh' && /\bpitcrew(\.js)? bootstrap\b/.test(first)) {
        kinds.push('bootstrap');
        await typeBlock(text, (command, result) => {
          if (command !== first) return;
          const issued = JSON.parse(result.stdout) as { apiKey: string; token: string };
          placeholders.set('pct_…', issued.token);
          placeholders.set('9f2c…', issued.apiKey);
        });
        const env = await terminal.environment();
        expect([env.PITCREW_TOKEN, env.PITCREW_API_KEY]).toEqual([placeholders.get('pct_…'), placeholders.get('9f2c…')]);
      } else if (lang === 'sh' && first.startsWith('curl ') && first.includes('/api/v1/rules')) {
        kinds.push('rule');
        const [created] = await typeBlock(text);
        rule = JSON.parse(created!.stdout) as typeof rule;
        expect(rule!.trigger.curl).toContain('${PITCREW_API_KEY}');
        expect(JSON.parse(fs.readFileSync(path.join(project, 'rule.json'), 'utf8'))).toEqual(rule);
      } else if (lang === 'sh' && first.includes('.trigger.curl')) {
        // "Run it": the rule's own curl, taken out of the reply as the README says.
        kinds.push('fire');
        fireLine = first;
        const [fired] = await typeBlock(text);
        reply = JSON.parse(fired!.stdout) as Record<string, unknown>;
      } else if (lang === 'json') {
        kinds.push('reply');
        const shown = JSON.parse(text) as Record<string, unknown>;
        expect(Object.keys(reply!).sort()).toEqual(Object.keys(shown).sort());
        // The event's id, wherever it stands (eventId, executionsUrl), is the README's `…`.
        expect(JSON.parse(JSON.stringify(reply).replaceAll(String(reply!.eventId), '…'))).toEqual(shown);
      } else if (lang === 'sh' && /\bpitcrew(\.js)? agent\b/.test(first)) {
        // The first line for a user, the second for root: the same command, and a user to run scripts as.
        const asRoot = agentLine !== undefined;
        kinds.push(asRoot ? 'agent as root' : 'agent');
        if (asRoot) expect(first).toBe(`${agentLine} --run-as nobody`);
        agentLine = first;
        if (asRoot !== (process.getuid?.() === 0)) continue;
        agent = startAgentAsWritten(fill(first), await terminal.environment());
        await waitFor(async () => ((await api('/api/v1/hosts?hostname=web-1')).items as Array<{ status: string }>)[0]?.status === 'online', 'web-1 online in GET /api/v1/hosts', 60_000);
        // "Fire the rule's curl again (the same eval line)": now it runs, on web-1.
        const fired = JSON.parse((await type(fireLine!)).stdout) as { outcome: string; executionIds: string[] };
        expect(fired.outcome).toBe('accepted');
        expect(fired.executionIds).toHaveLength(1);
        const execution = await waitFor(async () => {
          const found = await api(`/api/v1/executions/${fired.executionIds[0]}`);
          return found.state === 'succeeded' ? found : undefined;
        }, 'the execution to succeed', 60_000);
        expect(execution).toMatchObject({ hostname: 'web-1', exitCode: 0, stdout: expect.stringMatching(/^restarting nginx on web-1 \(.+\)\n$/) });
      } else if (lang === 'sh' && /\bpitcrew(\.js)? channels create\b/.test(first)) {
        kinds.push('channels');
        const [created, tested] = await typeBlock(text, (command, result) => {
          if (command === first) placeholders.set('<id>', /\(([0-9a-f-]{36})\)/.exec(result.stdout)![1]!);
        });
        expect(created!.stdout).toMatch(/^created slack channel "ops" \([0-9a-f-]{36}\), mode all; try it: npx pitcrew channels test [0-9a-f-]{36}\n$/);
        expect(tested!.stdout).toMatch(/^delivered \(HTTP 200\) in \d+ ms/);
        expect(receiver.accepted()).toHaveLength(1);
      } else {
        throw new Error(`the README's quick start has a block this test does not know how to run; teach it:\n${text}`);
      }
    }
    expect(kinds).toEqual(['start', 'bootstrap', 'rule', 'fire', 'reply', 'agent', 'agent as root', 'channels']);
  }, 240_000);

  it('names the variable that keeps the service on loopback, and says truly that it listens on every interface by default', () => {
    const said = /listens on every interface of the machine\s+\(`HOST`, default `([^`]+)`\)[^`]*`HOST=([^ `]+) npm start`/.exec(readme);
    expect(said, 'the quick start says where the service listens and how to keep it on loopback').not.toBeNull();
    expect(loadConfig({}, project).host).toBe(said![1]);
    expect(loadConfig({ HOST: said![2]! }, project).host).toBe('127.0.0.1');
  });

  it('prints the fingerprint the service logs with the commands of the README and docs/agent.md, as written', async () => {
    const agentDoc = fs.readFileSync(path.join(root, 'docs/agent.md'), 'utf8');
    const block = [...agentDoc.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!).find((text) => text.includes('openssl x509'));
    const inline = /`(openssl x509 [^`]+)`/.exec(readme)?.[1];
    expect(server.fingerprint).toMatch(/^[0-9A-F:]{95}$/);
    for (const command of [...shellCommands(block!), inline!]) {
      const printed = (await type(command)).stdout.trim();
      expect(normaliseFingerprint(printed), command).toBe(server.fingerprint);
    }
  });

  it('tells an agent that does not trust the service\'s certificate what to pass, and where the fingerprint is', async () => {
    const untrusting = spawnAgent({ server: `https://localhost:${tlsPort}`, apiKey: 'unused: the handshake fails first', hostname: 'web-2' });
    try {
      const line = await waitFor(() => untrusting.output().split('\n').find((l) => l.includes('could not reach the service; retrying')), 'the failed connection logged');
      const logged = JSON.parse(line) as { error: string; hint: string };
      // Node 24 adds its own advice to the message ("; if the root CA is installed locally, try running
      // Node.js with --use-system-ca"); the agent's hint is the same on every line.
      expect(logged.error).toMatch(/^self-signed certificate(; if the root CA is installed locally, try running Node\.js with --use-system-ca)?$/);
      expect(logged.hint).toContain('pass --ca-file PEM (the service\'s $PITCREW_DATA_DIR/tls/cert.pem, data/tls/cert.pem by default) or --server-fingerprint SHA256');
      expect(logged.hint).toContain('TLS certificate SHA-256 fingerprint AB:CD:…');
      // That line is the service's: the advice points at what it really logs.
      expect(server.output()).toContain(`TLS certificate SHA-256 fingerprint ${server.fingerprint}`);
    } finally {
      await untrusting.kill();
    }
  });

  /** In a second terminal: the agent runs until stopped. */
  function startAgentAsWritten(command: string, env: Record<string, string>): ChildProcess {
    const child = spawn('bash', ['--noprofile', '--norc', '-c', command], {
      cwd: project,
      env: { ...env, PITCREW_AGENT_STATE_DIR: path.join(agentState, 'state') },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    });
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    child.once('exit', (code) => {
      if (code !== 0 && code !== null) console.error(`the README's agent command exited ${code}:\n${output}`);
    });
    return child;
  }
});
