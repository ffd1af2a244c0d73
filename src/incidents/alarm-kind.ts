import { STARTER_RUNBOOKS } from '../runbooks/library/catalogue.js';

/**
 * What an alarm is about, told from its name (issue 38.4): the kinds the starter runbook library
 * has a first response for. `other` when the name says none of them.
 */
export type AlarmKind = 'certificate' | 'disk' | 'memory' | 'service_down' | 'other';

/**
 * The words that name each kind, tried in this order: a certificate alarm may say "down" of its
 * probe, a swap alarm "space". Names are split into words at case changes and at anything but
 * letters and digits: "NodeFilesystemSpaceFillingUp" is node, filesystem, space, filling, up.
 */
const KIND_WORDS: ReadonlyArray<readonly [AlarmKind, readonly string[]]> = [
  ['certificate', ['cert', 'certs', 'certificate', 'certificates', 'ssl', 'tls', 'x509']],
  ['memory', ['memory', 'mem', 'oom', 'oomkilled', 'swap', 'swapping', 'heap', 'rss', 'ram']],
  ['disk', ['disk', 'disks', 'filesystem', 'filesystems', 'fs', 'inode', 'inodes', 'volume', 'volumes', 'storage', 'partition', 'diskspace', 'freespace', 'mountpoint', 'space']],
  ['service_down', ['down', 'unreachable', 'unavailable', 'unhealthy', 'dead', 'crashed', 'crash', 'crashing', 'crashloop', 'crashloopbackoff', 'stopped', 'notrunning', 'unresponsive', 'health', 'healthcheck', 'restarting', 'systemd']],
];

/** The words of an alarm name, lower case: "HostOutOfMemory" → host, out, of, memory; "disk_full" → disk, full. */
export function nameWords(name: string): string[] {
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
}

export function alarmKind(alarmName: string): AlarmKind {
  const words = nameWords(alarmName);
  // "not running", "not responding": one kind of down.
  const joined = words.join(' ');
  for (const [kind, names] of KIND_WORDS) {
    if (words.some((word) => names.includes(word))) return kind;
    if (kind === 'service_down' && /\bnot (running|responding|ready|up)\b|\bno (process|service)\b/.test(joined)) return kind;
  }
  return 'other';
}

/** A starter runbook suggested for a kind, and the flavour its rule should run it with. */
export interface StarterSuggestion {
  /** The runbook library's slug (GET /runbook-library/{slug}; install it before the rule uses it). */
  slug: string;
  name: string;
  flavour: 'autofix' | 'diagnostics';
  why: string;
}

const SUGGESTIONS: Readonly<Record<Exclude<AlarmKind, 'other'>, { slug: string; flavour: 'autofix' | 'diagnostics'; why: string }>> = {
  disk: { slug: 'disk-cleanup', flavour: 'autofix', why: 'deletes old files matching patterns under the paths you give (a dry run until DryRun is false)' },
  memory: { slug: 'top-memory', flavour: 'diagnostics', why: 'shows which processes hold the memory, changing nothing, before anyone restarts one' },
  service_down: { slug: 'restart-service', flavour: 'autofix', why: 'restarts the systemd service and checks that it stays up' },
  certificate: { slug: 'cert-expiry', flavour: 'diagnostics', why: 'reads the certificates an endpoint or file holds and says when each expires' },
};

/** The starter runbook for an alarm of this kind, or null for `other` (the wizard then asks for one). */
export function starterFor(kind: AlarmKind): StarterSuggestion | null {
  if (kind === 'other') return null;
  const suggestion = SUGGESTIONS[kind];
  const entry = STARTER_RUNBOOKS.find((runbook) => runbook.slug === suggestion.slug);
  // The library and this table ship together: a slug missing here is a bug a test catches (alarm-kind.test.ts).
  if (!entry) throw new Error(`the starter library has no ${suggestion.slug}`);
  return { slug: entry.slug, name: entry.name, flavour: suggestion.flavour, why: suggestion.why };
}
