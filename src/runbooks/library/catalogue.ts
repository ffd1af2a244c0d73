import type { Interpreter } from '../schema.js';

/**
 * The starter library shipped with pitcrew (issue 20): each runbook is `starter/<slug>.sh`, its
 * script, and `starter/<slug>.md`, its notes for people; its name, interpreter and the variables
 * it reads are here. Every variable has a default or a clear refusal in the script, and is
 * described in the notes (library.test.ts checks all three agree).
 */
export interface StarterRunbook {
  slug: string;
  name: string;
  interpreter: Interpreter;
  env: string[];
}

export const STARTER_RUNBOOKS: readonly StarterRunbook[] = [
  { slug: 'disk-cleanup', name: 'disk cleanup', interpreter: 'sh', env: ['CleanupPaths', 'CleanupPatterns', 'OlderThanDays', 'DryRun', 'MaxDeleteFiles'] },
  { slug: 'restart-service', name: 'restart a systemd service', interpreter: 'sh', env: ['ServiceName', 'RestartTimeoutSeconds', 'SettleSeconds', 'JournalLines'] },
  { slug: 'jvm-thread-dump', name: 'JVM thread dump', interpreter: 'sh', env: ['JavaPid', 'JavaProcess', 'DumpCount', 'DumpIntervalSeconds'] },
  { slug: 'top-memory', name: 'top memory processes', interpreter: 'sh', env: ['TopCount', 'ShowCommandLines'] },
  { slug: 'log-tail', name: 'log tail', interpreter: 'sh', env: ['LogFile', 'LogLines', 'LogPattern', 'LogRoots'] },
  { slug: 'cert-expiry', name: 'certificate expiry', interpreter: 'sh', env: ['CertEndpoints', 'CertFiles', 'CertWarnDays', 'CertServerName', 'CertConnectTimeoutSeconds'] },
];

/**
 * Where the starter runbooks are, from the package root. The built server reads them from the
 * source tree (cli/server.ts), as it serves web/dist and dist/pitcrew-agent.mjs from beside dist:
 * one copy of each script, the one reviewed, never a stale build output.
 */
export const STARTER_DIR = 'src/runbooks/library/starter';
