import { Type, type Static } from 'typebox';

/**
 * An integration's import settings as the API takes and shows them (DESIGN.md §7 "Incidents",
 * docs/incidents-import.md): whether pitcrew reads the tool's alarms on a schedule, how often, how
 * far back a first import reaches, how fast it may call the tool, and the read-only secret (or
 * stored credential) it reads with.
 */
export const IMPORT_DEFAULTS = { intervalSeconds: 300, lookbackDays: 30, requestsPerSecond: 5 } as const;

export const ImportPatch = Type.Object({
  enabled: Type.Boolean({ description: 'import on a schedule (every intervalSeconds); an import can be started on demand either way' }),
  intervalSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 7 * 86_400, description: `seconds between scheduled imports (default ${IMPORT_DEFAULTS.intervalSeconds})` })),
  lookbackDays: Type.Optional(Type.Integer({ minimum: 0, maximum: 365, description: `how many days of history the first import reads (default ${IMPORT_DEFAULTS.lookbackDays}); later imports continue from where the last stopped` })),
  requestsPerSecond: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 100, description: `calls to the tool per second at most (default ${IMPORT_DEFAULTS.requestsPerSecond})` })),
  credentialId: Type.Optional(Type.Union([Type.String({ format: 'uuid' }), Type.Null()], { description: 'a stored credential to read with (CloudWatch: an AWS credential); replaces a secret; null removes it' })),
  secret: Type.Optional(Type.Union([
    Type.String({ minLength: 1, maxLength: 8192 }),
    Type.Record(Type.String(), Type.Unknown()),
    Type.Null(),
  ], { description: "write-only: the tool's read-only key, token or login (per tool: docs/incidents-import.md); stored encrypted, never returned; replaces a credentialId; null removes it" })),
}, { additionalProperties: false });

export type ImportPatch = Static<typeof ImportPatch>;

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const IMPORT_STATES = ['queued', 'running', 'succeeded', 'failed'] as const;
export type ImportState = (typeof IMPORT_STATES)[number];

export const ImportSettingsView = Type.Object({
  enabled: Type.Boolean(),
  intervalSeconds: Type.Integer(),
  lookbackDays: Type.Integer(),
  requestsPerSecond: Type.Number(),
  credentialId: Type.Union([Type.String(), Type.Null()]),
  hasSecret: Type.Boolean({ description: 'whether a secret is set (it is never returned)' }),
  nextAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()], { description: 'when the next scheduled import is due (null: not scheduled)' }),
  status: Type.Object({
    lastImportId: Type.Union([Type.String(), Type.Null()]),
    state: Type.Union([Type.Enum([...IMPORT_STATES]), Type.Null()], { description: 'the last import’s state (null: none yet)' }),
    startedAt: Time,
    endedAt: Time,
    imported: Type.Union([Type.Integer(), Type.Null()], { description: 'what the last import applied (observations of alarms firing or resolved)' }),
    importedTotal: Type.Integer({ description: 'what every import of this integration applied' }),
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'why the last import that failed failed: the tool, the URL and its answer' }),
    lastErrorAt: Time,
  }),
}, { description: 'the import of the tool’s alarms with its read-only credential (docs/incidents-import.md); null until set with PATCH {import}' });

export type ImportSettingsView = Static<typeof ImportSettingsView>;

export const ImportNeedsView = Type.Object({
  tool: Type.String(),
  secret: Type.String({ description: 'what the import reads with, in words' }),
  credentialProviders: Type.Array(Type.String(), { description: 'the providers of stored credentials it may read with (credentialId); empty: a secret only' }),
}, { description: 'what an import of this tool needs (docs/incidents-import.md); null: the tool has no import' });

export type ImportNeedsView = Static<typeof ImportNeedsView>;
