import type { ImportState } from '../integrations/import-schema.js';
import type { ImportRow } from '../store/schema.js';
import type { ImportView } from './schema.js';

export function presentImport(row: ImportRow): ImportView {
  const iso = (ms: number) => new Date(Number(ms)).toISOString();
  return {
    id: row.id,
    state: row.state as ImportState,
    trigger: row.trigger as ImportView['trigger'],
    queuedAt: iso(row.queued_at),
    startedAt: iso(row.started_at ?? row.queued_at),
    ...(row.ended_at === null ? {} : { endedAt: iso(row.ended_at) }),
    imported: row.imported,
    pages: row.pages,
    ...(row.error === null ? {} : { error: row.error }),
  };
}
