import { Type, type Static } from 'typebox';
import { ImportNeedsView, ImportPatch, ImportSettingsView } from './import-schema.js';

/** The monitoring tools an integration can be (DESIGN.md §7). */
export const INTEGRATION_TYPES = ['alertmanager', 'grafana', 'monasca', 'zabbix', 'datadog', 'pagerduty', 'cloudwatch_sns', 'generic'] as const;
export type IntegrationType = (typeof INTEGRATION_TYPES)[number];

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Config = Type.Record(Type.String(), Type.Unknown(), {
  description: "the tool's settings, not secret (e.g. hostLabel: the label that names the host; generic: mapping); see docs/integrations.md",
});
const Secret = Type.String({
  minLength: 1,
  maxLength: 8192,
  description: 'write-only: a signing secret (Grafana, PagerDuty) or a read-only token (Monasca); stored encrypted, never returned',
});

const GraphSecret = Type.Union([
  Type.String({ minLength: 1, maxLength: 8192 }),
  Type.Object({ username: Type.String({ maxLength: 1024 }), password: Type.String({ maxLength: 8192 }) }, { additionalProperties: false }),
], {
  description: "write-only: what the tool's graphs are read with (docs/graph-snapshots.md): grafana, a service account token (glsa_…); " +
    'alertmanager, a bearer token or {username, password} for Prometheus (else the import’s secret). Stored encrypted, never returned',
});

export const IntegrationInput = Type.Object(
  {
    name: Name,
    type: Type.Enum([...INTEGRATION_TYPES]),
    config: Type.Optional(Config),
    secret: Type.Optional(Secret),
    graphSecret: Type.Optional(GraphSecret),
  },
  { additionalProperties: false },
);

export const IntegrationPatch = Type.Object(
  {
    name: Type.Optional(Name),
    config: Type.Optional(Config),
    secret: Type.Optional(Type.Union([Secret, Type.Null()], { description: 'null removes the secret' })),
    graphSecret: Type.Optional(Type.Union([GraphSecret, Type.Null()], { description: 'null removes the graph secret' })),
    import: Type.Optional(ImportPatch),
  },
  { additionalProperties: false, minProperties: 1 },
);

const Time = Type.Union([Type.String({ format: 'date-time' }), Type.Null()]);

export const IntegrationView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  type: Type.Enum([...INTEGRATION_TYPES]),
  url: Type.String({ description: 'where the tool sends its alerts; the tenant API key appears as <api_key>' }),
  curl: Type.Optional(Type.String({
    description: "ready sample: one firing alert about web-1 in the tool's own body, posted to the URL; export PITCREW_API_KEY first " +
      '(and PITCREW_INTEGRATION_SECRET for a Datadog or Zabbix integration with a secret). Absent when only the tool can sign what it sends: cloudwatch_sns, and grafana or pagerduty with a secret',
  })),
  testCurl: Type.String({ description: 'ready: a test alert through the integration (POST /api/v1/integrations/{id}/test), a dry run; export PITCREW_TOKEN first' }),
  config: Config,
  hasSecret: Type.Boolean({ description: 'whether a secret is set (it is never returned)' }),
  hasGraphSecret: Type.Boolean({ description: 'whether a graph secret is set (it is never returned)' }),
  status: Type.Object({
    lastAlertAt: Time,
    lastError: Type.Union([Type.String(), Type.Null()], { description: 'why the last refused delivery was refused' }),
    lastErrorAt: Time,
  }),
  import: Type.Union([ImportSettingsView, Type.Null()]),
  importNeeds: Type.Union([ImportNeedsView, Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  updatedAt: Type.String({ format: 'date-time' }),
});

export type IntegrationInput = Static<typeof IntegrationInput>;
export type IntegrationPatch = Static<typeof IntegrationPatch>;
export type IntegrationView = Static<typeof IntegrationView>;

/** The inbound path of an integration (DESIGN.md §7): the tool posts its own body here. */
export function integrationPath(type: string, apiKey: string, id: string): string {
  return `/api/v1/trigger/channel/${type}/${apiKey}/${id}`;
}
