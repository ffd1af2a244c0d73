// Preloaded into a `pitcrew server` under test (`node --import`, test/start-modules.test.ts): when
// the server writes its line that says where agents connect (both ports listening), it writes every
// module file loaded until then to $PITCREW_TEST_MODULE_LIST, one a line: ES modules as the loader
// hook saw them, CommonJS ones from require's cache. The hook runs on a thread of its own and posts
// each URL; a mark sent to it at the line and echoed back comes after every URL it posted before.
import fs from 'node:fs';
import { createRequire, register } from 'node:module';
import { MessageChannel } from 'node:worker_threads';

const MARK = 'pitcrew-test:listening';
const hooks = `let port;
export function initialize(data) {
  port = data.port;
  port.on('message', (message) => port.postMessage(message));
}
export async function load(url, context, next) {
  port.postMessage(url);
  return next(url, context);
}`;

const out = process.env.PITCREW_TEST_MODULE_LIST;
const { port1, port2 } = new MessageChannel();
const esm = [];
let cjs;
port1.on('message', (message) => {
  if (message !== MARK) return void esm.push(message);
  const files = [...esm.map((url) => (url.startsWith('file:') ? new URL(url).pathname : url)), ...cjs];
  // Whole or not at all: the test reads the file as soon as it exists (written, then renamed into place).
  fs.writeFileSync(`${out}.partial`, files.join('\n'));
  fs.renameSync(`${out}.partial`, out);
  port1.close();
});
port1.unref();
register(`data:text/javascript,${encodeURIComponent(hooks)}`, import.meta.url, { data: { port: port2 }, transferList: [port2] });

// pino writes to process.stdout itself once its write is replaced (pino's tools.js, hasBeenTampered).
const write = process.stdout.write.bind(process.stdout);
process.stdout.write = (chunk, ...rest) => {
  if (cjs === undefined && String(chunk).includes('agents connect to')) {
    cjs = Object.keys(createRequire(import.meta.url).cache);
    port1.postMessage(MARK);
  }
  return write(chunk, ...rest);
};
