import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

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
});
