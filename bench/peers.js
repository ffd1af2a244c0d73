// Against a peer (bench/README.md, "Against Node-RED"): bench/e2e.js with its peers phase only
// unless BENCH_E2E_PHASES says otherwise. BENCH_ONLY=peers npm run bench runs it after a build.
process.env.BENCH_E2E_PHASES ||= 'peers';
await import('./e2e.js');
