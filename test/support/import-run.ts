import { policyFetch, type PolicyFetch } from '../../src/egress/fetch.js';
import { EgressPolicy } from '../../src/egress/policy.js';
import { RateLimiter } from '../../src/imports/rate-limit.js';
import { importFetch } from '../../src/imports/read-only.js';
import type { ImportNeeds } from '../../src/integrations/import-needs.js';
import type { AlarmObservation, ImportCursor, Importer, ImportPage } from '../../src/integrations/observation.js';

/**
 * Drives an importer as the import scheduler does: pages while `more`, each through the service's
 * egress-checked fetch (here allowing loopback, where the emulators listen), and records every call.
 */
export interface ImportRun {
  observations: AlarmObservation[];
  cursor: ImportCursor;
  pages: ImportPage[];
}

export interface ImportSetup {
  config: Record<string, unknown>;
  secret: unknown;
  since: number;
  now: number;
}

/** The service's fetch under an egress policy that lets loopback through (the emulators'), and the URLs it was asked for. */
export function loopbackFetch(): { fetch: PolicyFetch; urls: string[]; methods: string[] } {
  const inner = policyFetch(new EgressPolicy(['127.0.0.0/8']));
  const urls: string[] = [];
  const methods: string[] = [];
  return {
    urls,
    methods,
    fetch: (url, init) => {
      urls.push(url);
      methods.push(init.method);
      return inner(url, init);
    },
  };
}

/**
 * The fetch the import runner gives an importer (src/imports/read-only.ts): the tool's read-only
 * rule (ImportNeeds) over loopbackFetch; `urls` and `methods` are what got past the rule and left.
 */
export function readOnlyFetch(needs: ImportNeeds): { fetch: PolicyFetch; urls: string[]; methods: string[] } {
  const sent = loopbackFetch();
  return { ...sent, fetch: importFetch(sent.fetch, needs, new RateLimiter(1000)) };
}

export async function importAll(importer: Importer | (() => Importer), setup: ImportSetup, cursor: ImportCursor | null = null, fetch: PolicyFetch = loopbackFetch().fetch): Promise<ImportRun> {
  const run: ImportRun = { observations: [], cursor: cursor ?? '', pages: [] };
  let position = cursor;
  for (let guard = 0; guard < 1000; guard += 1) {
    // A factory makes a new importer per page, as a restarted service would: nothing is kept but the cursor.
    const page = await (typeof importer === 'function' ? importer() : importer).importPage({ ...setup, cursor: position, fetch, signal: AbortSignal.timeout(20_000) });
    run.pages.push(page);
    run.observations.push(...page.observations);
    position = page.cursor;
    run.cursor = page.cursor;
    if (!page.more) return run;
  }
  throw new Error('the import did not end within 1000 pages');
}

/** Observations as "key state at" lines, sorted: compared as a set. */
export function lines(observations: AlarmObservation[]): string[] {
  return observations.map((o) => `${o.incidentKey} ${o.state} ${o.at === null ? 'null' : new Date(o.at).toISOString()}`).sort();
}

/** Each key's firing comes before its resolution. */
export function firingBeforeResolved(observations: AlarmObservation[]): boolean {
  const fired = new Set<string>();
  for (const o of observations) {
    if (o.state === 'firing') fired.add(o.incidentKey);
    else if (!fired.has(o.incidentKey)) return false;
  }
  return true;
}
