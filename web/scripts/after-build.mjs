// After `vite build web`: writes gzip and Brotli copies of the assets (the server sends them to
// browsers that accept them) and fails the build when the first page needs more than the budget
// of gzipped JavaScript. Usage: node web/scripts/after-build.mjs [web/dist]
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';

const BUDGET_BYTES = 300 * 1024;
const COMPRESSIBLE = /\.(js|css|html|svg|json|map)$/;

const dist = path.resolve(process.argv[2] ?? 'web/dist');
const manifest = JSON.parse(fs.readFileSync(path.join(dist, '.vite/manifest.json'), 'utf8'));

const gzip = (buffer) => zlib.gzipSync(buffer, { level: 9 });
const brotli = (buffer) => zlib.brotliCompressSync(buffer, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11 } });

for (const file of fs.readdirSync(dist, { recursive: true })) {
  const full = path.join(dist, file);
  if (!COMPRESSIBLE.test(file) || !fs.statSync(full).isFile()) continue;
  const content = fs.readFileSync(full);
  if (content.length < 1024) continue;
  fs.writeFileSync(`${full}.gz`, gzip(content));
  fs.writeFileSync(`${full}.br`, brotli(content));
}

// The first page is the entry chunk and what it imports statically; pages arrive on demand.
const firstPage = new Set();
const visit = (key) => {
  const chunk = manifest[key];
  if (!chunk || firstPage.has(chunk.file)) return;
  firstPage.add(chunk.file);
  for (const imported of chunk.imports ?? []) visit(imported);
};
for (const [key, chunk] of Object.entries(manifest)) if (chunk.isEntry) visit(key);

const sizes = [...firstPage].filter((file) => file.endsWith('.js')).map((file) => ({ file, gzip: gzip(fs.readFileSync(path.join(dist, file))).length }));
const total = sizes.reduce((sum, s) => sum + s.gzip, 0);
const kib = (bytes) => `${(bytes / 1024).toFixed(1)} KiB`;
for (const s of sizes) console.log(`  first page  ${s.file}  ${kib(s.gzip)} gzipped`);
console.log(`first page JavaScript: ${kib(total)} gzipped (budget ${kib(BUDGET_BYTES)})`);
if (total > BUDGET_BYTES) {
  console.error(`the first page needs ${kib(total)} of gzipped JavaScript, over the ${kib(BUDGET_BYTES)} budget: load more of it on demand (React.lazy)`);
  process.exit(1);
}
