import { Type, type Static } from 'typebox';
import { IMPORT_STATES } from '../integrations/import-schema.js';

/** One import of an integration's tool (DESIGN.md §7 "Incidents": {id, state, startedAt, endedAt?, imported, error?}). */
export const ImportView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  state: Type.Enum([...IMPORT_STATES]),
  trigger: Type.Enum(['schedule', 'manual'], { description: 'schedule: the integration’s import.intervalSeconds; manual: POST …/import' }),
  queuedAt: Type.String({ format: 'date-time' }),
  startedAt: Type.String({ format: 'date-time', description: 'when it started; while queued, when it was asked for' }),
  endedAt: Type.Optional(Type.String({ format: 'date-time' })),
  imported: Type.Integer({ description: 'observations applied (an alarm firing or resolved, at the tool’s time)' }),
  pages: Type.Integer({ description: 'pages read from the tool and applied' }),
  error: Type.Optional(Type.String({ description: 'why it failed: the tool, the URL and what it answered' })),
});

export const ImportQueued = Type.Object({
  importId: Type.String({ format: 'uuid' }),
  created: Type.Boolean({ description: 'false: an import of this integration was already queued or running; this is its id' }),
});

export type ImportView = Static<typeof ImportView>;
