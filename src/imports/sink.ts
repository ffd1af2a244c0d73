import type { Kysely } from 'kysely';
import type { AlarmObservation } from '../integrations/observation.js';
import type { Database } from '../store/schema.js';

/**
 * Where an import's observations go: the incidents (issue 38.1, `applyObservations` of
 * src/incidents/). Called inside the transaction that also stores the page's cursor, with that
 * transaction as `db`, so a page is applied and its place recorded together or not at all.
 * `openKeys`: every key open in the tool, from a tool that lists only what is open (Alertmanager):
 * the integration's open incidents not named there resolve.
 */
export type ObservationSink = (
  db: Kysely<Database>,
  tenantId: string,
  integrationId: string,
  observations: AlarmObservation[],
  receivedAt: number,
  options: { openKeys?: string[] },
) => Promise<void>;
