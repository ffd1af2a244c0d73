import { runAgent } from './main.js';

runAgent(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`pitcrew-agent: ${(error as Error).stack ?? String(error)}`);
    process.exitCode = 1;
  },
);
