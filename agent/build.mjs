// Bundles the agent into one file that runs on a bare Node.js 24, 22 or 20.19+ (the oldest line supported
// sets the target), with no npm install on the host.
// Usage: node agent/build.mjs [OUTFILE]   (default dist/pitcrew-agent.mjs)
import { build } from 'esbuild';
import { chmod } from 'node:fs/promises';

const outfile = process.argv[2] ?? 'dist/pitcrew-agent.mjs';

await build({
  entryPoints: ['agent/cli.ts'],
  outfile,
  bundle: true,
  platform: 'node',
  target: 'node20.19',
  format: 'esm',
  // ws probes for these optional native speed-ups; the agent runs without them.
  external: ['bufferutil', 'utf-8-validate'],
  banner: { js: "#!/usr/bin/env node\nimport { createRequire as __pitcrewRequire } from 'node:module'; const require = __pitcrewRequire(import.meta.url);" },
  legalComments: 'none',
  logLevel: 'warning',
});
await chmod(outfile, 0o755);
