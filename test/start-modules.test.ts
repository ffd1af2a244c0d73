import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { createTestDatabase, testDialects } from './support/databases.js';
import { startServer } from './support/process.js';
import { waitFor } from './support/wait.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/**
 * Libraries only one feature uses, loaded at its first use (docs/architecture.md, "What one feature
 * needs loads at its first use"): together ~0.7 s of CPU at every restart before listening when
 * they were static imports (bench/README.md, session 32).
 */
const LOADED_AT_FIRST_USE = [
  'node_modules/@aws-sdk/',
  'node_modules/@azure/',
  'node_modules/@google-cloud/',
  'node_modules/@node-saml/',
  'node_modules/xml2js/',
  'node_modules/openid-client/',
  'node_modules/jose/',
  'node_modules/nodemailer/',
  'node_modules/selfsigned/',
  'node_modules/echarts/',
  'node_modules/@resvg/',
];

/**
 * Loaded at their first use too, though the server's own modules import what loads them: the
 * PostgreSQL driver (a SQLite service never needs it), the terminal's log format and the runbook
 * email's Markdown (bench/README.md, session 34).
 */
const LOADED_AFTER_LISTENING = ['node_modules/pino-pretty/', 'node_modules/marked/'];

/** Preloaded into a started server: writes the module files it loaded by listening (test/support/module-list.mjs). */
const MODULE_LIST = path.join(root, 'test/support/module-list.mjs');

/** A server process starts in seconds, more on a loaded machine. */
const SERVER_TEST_MS = 120_000;

/**
 * Imports what `pitcrew server` imports before it runs (the built cli/server.js, and app.js with
 * it) in a node of its own, and prints every module file loaded: ES modules through a loader
 * hook, CommonJS ones from require's cache.
 */
const LIST_MODULES = `
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';
const hooks = 'let port; export function initialize(data) { port = data.port; } '
  + 'export async function load(url, context, next) { port.postMessage(url); return next(url, context); }';
const { port1, port2 } = new MessageChannel();
const urls = [];
port1.on('message', (url) => urls.push(url));
register('data:text/javascript,' + encodeURIComponent(hooks), import.meta.url, { data: { port: port2 }, transferList: [port2] });
await import(process.argv[1]);
setTimeout(() => {
  const cjs = Object.keys(createRequire(import.meta.url).cache);
  process.stdout.write(JSON.stringify([...urls.map((url) => url.startsWith('file:') ? new URL(url).pathname : url), ...cjs]));
  process.exit(0);
}, 200);
`;

describe('pitcrew server start', () => {
  it('loads none of the libraries that wait for their first use', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', LIST_MODULES, path.join(root, 'dist/src/cli/server.js')], { cwd: root, timeout: 60_000 });
    const loaded = JSON.parse(stdout) as string[];
    expect(loaded.some((file) => file.endsWith('dist/src/server/app.js'))).toBe(true);
    expect(loaded.filter((file) => LOADED_AT_FIRST_USE.some((library) => file.includes(library)))).toEqual([]);
  }, 90_000);

  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  for (const dialect of testDialects()) {
    it(`listens on ${dialect} without the libraries no request has needed yet${dialect === 'sqlite' ? ', PostgreSQL\'s driver among them' : ''}`, async () => {
      const database = await createTestDatabase(dialect);
      cleanups.push(() => database.drop());
      // A restart: the first start makes the certificate (selfsigned loads for that only).
      await (await startServer(database.env)).stop();
      const list = path.join(database.dataDir, 'modules-at-listening.txt');
      const server = await startServer({ ...database.env, PITCREW_LOG_FORMAT: 'json', NODE_OPTIONS: `--import=${MODULE_LIST}`, PITCREW_TEST_MODULE_LIST: list });
      cleanups.push(() => server.stop());
      const loaded = await waitFor(() => fs.existsSync(list) && fs.readFileSync(list, 'utf8').split('\n'), 'the list of modules loaded by listening');
      expect(loaded.some((file) => file.endsWith('dist/src/server/app.js'))).toBe(true);
      const of = (libraries: string[]) => loaded.filter((file) => libraries.some((library) => file.includes(library)));
      expect(of([...LOADED_AFTER_LISTENING, ...LOADED_AT_FIRST_USE])).toEqual([]);
      expect(of(['node_modules/pg/']).length > 0).toBe(dialect === 'postgres');
    }, SERVER_TEST_MS);
  }
});
