import { Type, type Static, type TObject } from 'typebox';
import { INTERPRETERS, MAX_SCRIPT_LENGTH } from '../runbooks/schema.js';

/*
 * The rule contract (DESIGN.md §1, §7). These schemas are at once the API validation, the OpenAPI
 * document and the TypeScript types. Action kinds not yet executed are still validated data.
 */

/**
 * A union told apart by its `type` field. Validated with Ajv's discriminator, so an error names
 * the fields of the chosen kind instead of every kind's (and OpenAPI shows the same discriminator).
 */
function tagged<T extends TObject[]>(variants: [...T]) {
  return Type.Unsafe<Static<T[number]>>({
    type: 'object',
    required: ['type'],
    discriminator: { propertyName: 'type' },
    oneOf: variants,
  });
}

const Name = Type.String({ minLength: 1, maxLength: 200, pattern: '\\S' });
const Hostname = Type.String({ minLength: 1, maxLength: 253, pattern: '^[A-Za-z0-9_.:-]+$' });
const Tag = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.:/=-]+$' });
const ScriptText = Type.String({ minLength: 1, maxLength: MAX_SCRIPT_LENGTH });

export const WebhookTrigger = Type.Object({ type: Type.Literal('webhook') }, { additionalProperties: false });
export const AlertTrigger = Type.Object(
  {
    type: Type.Literal('alert'),
    integrationId: Type.String({ format: 'uuid', description: "the integration whose alerts raise the rule (POST /api/v1/integrations)" }),
    alarmName: Type.Optional(Type.String({ minLength: 1, maxLength: 500, description: 'the alert names that match: a glob (* any text, ? one character; "disk_*"), or a regular expression between slashes ("/^disk_(full|low)$/"); absent: every alert' })),
    severity: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20, uniqueItems: true, description: 'the severities that match, compared without case; absent: any' })),
    labels: Type.Optional(Type.Record(Type.String({ minLength: 1, maxLength: 200 }), Type.String({ maxLength: 500 }), { description: 'labels (dimensions, tags) the alert must carry, each value a glob' })),
    on: Type.Optional(Type.Enum(['firing', 'resolved', 'both'], { description: 'which alerts act: firing (default), resolved, or both; the others are recorded only' })),
    hostLabel: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: "the label whose value names the host (trigger_host), instead of the tool's own (Alertmanager instance, Monasca hostname)" })),
  },
  { additionalProperties: false },
);
export const CronTrigger = Type.Object(
  {
    type: Type.Literal('cron'),
    schedule: Type.String({ minLength: 1, maxLength: 200, description: 'cron expression, e.g. "*/5 * * * *": 5 fields, 6 with seconds first, 7 with a year last, or @hourly, @daily, @midnight, @weekly, @monthly, @yearly, @annually; it must fire at least once more (docs/scheduler.md)' }),
    timezone: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'IANA zone; default UTC' })),
    overlap: Type.Optional(Type.Enum(['skip', 'queue', 'allow'], { description: 'a tick while the previous run has not ended: skip (default: recorded, not run), queue (runs once the previous run ends; one tick waits at most, later ones are recorded) or allow (runs too)' })),
  },
  { additionalProperties: false },
);
export const TriggerInput = tagged([WebhookTrigger, AlertTrigger, CronTrigger]);

export const Interpreter = Type.Enum([...INTERPRETERS]);
const Sha256 = Type.String({ pattern: '^[0-9a-f]{64}$' });

/**
 * A script or CLI action's runbook, in one of three forms (DESIGN.md §7): written here
 * `{script, interpreter?}`, a stored runbook `{runbookId, version?}` (no version: it follows the
 * latest), or a file of a git repository `{repositoryId, path, ref?}` read before each run. One
 * object rather than a union, so that a mistake is told at its field (validate.ts says which form
 * a body mixes up). The read-only fields are the service's: shown, ignored when sent back.
 */
export const Runbook = Type.Object(
  {
    script: Type.Optional(ScriptText),
    interpreter: Type.Optional(Interpreter),
    notes: Type.Optional(Type.String({ maxLength: 256 * 1024, description: 'human-readable steps (Markdown)' })),
    runbookId: Type.Optional(Type.String({ format: 'uuid', description: 'a stored runbook (POST /api/v1/runbooks)' })),
    version: Type.Optional(Type.Integer({ minimum: 1, description: "with runbookId: the version it runs, pinned; absent: the latest, whenever the runbook is saved again" })),
    repositoryId: Type.Optional(Type.String({ format: 'uuid', description: 'a connected git repository (POST /api/v1/repositories): its file at path is read before each run' })),
    path: Type.Optional(Type.String({ minLength: 1, maxLength: 1024, description: "with repositoryId: the file's path in the repository, e.g. runbooks/restart-nginx.sh" })),
    ref: Type.Optional(Type.String({ minLength: 1, maxLength: 255, description: "with repositoryId: a branch or tag; default the repository's" })),
    name: Type.Optional(Type.String({ readOnly: true, description: "a stored runbook's name" })),
    resolvedVersion: Type.Optional(Type.Integer({ readOnly: true, description: 'the version of the stored runbook that runs now' })),
    sha256: Type.Optional({ ...Sha256, readOnly: true, description: "hex SHA-256 of the script that runs now (the agent checks it); none for a git file, whose script is read at each run" }),
  },
  { additionalProperties: false, description: 'one of {script, interpreter?}, {runbookId, version?} or {repositoryId, path, ref?, interpreter?}' },
);
export type RunbookRef = Static<typeof Runbook>;
const TimeoutSeconds = Type.Integer({ minimum: 1, maximum: 86_400, description: 'default 300' });

/** "Capture graphs too" on a fix (docs/graph-snapshots.md): a graph_snapshot beside it, which never delays it nor fails it. */
const SnapshotOption = Type.Object(
  {
    integrationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    graphs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 20 })),
    windowMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080 })),
  },
  { additionalProperties: false, description: 'capture graphs too: the alert’s graph (or these) from the integration’s tool, beside the fix, as a graph_snapshot execution of the same event; its failure does not fail the fix' },
);

export const ScriptAction = Type.Object(
  {
    type: Type.Literal('script'),
    flavour: Type.Enum(['autofix', 'diagnostics']),
    runbook: Runbook,
    timeoutSeconds: Type.Optional(TimeoutSeconds),
    snapshot: Type.Optional(SnapshotOption),
  },
  { additionalProperties: false },
);
const Instances = Type.Union([
  Type.Object({ from: Type.Literal('payload'), field: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'the payload field (or MetaData key) that holds the instance id; default InstanceId' })) }, { additionalProperties: false }),
  Type.Object({ ids: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { minItems: 1, maxItems: 100, uniqueItems: true }) }, { additionalProperties: false }),
  Type.Object({ tags: Type.Record(Type.String({ minLength: 1, maxLength: 128 }), Type.String({ maxLength: 256 }), { minProperties: 1, maxProperties: 10, description: 'every one of these tags (name: value) at the provider, resolved when the run starts: one execution per instance found' }) }, { additionalProperties: false }),
], { description: 'the instances it acts on: named by the payload (default), a fixed list, or a provider tag filter' });
export const CloudAction = Type.Object(
  {
    type: Type.Literal('cloud'),
    provider: Type.Optional(Type.Enum(['aws', 'azure', 'gcp', 'openstack'], { description: "the cloud; default the one of the rule's infrastructureType" })),
    operation: Type.Enum(['start', 'stop', 'reboot', 'terminate']),
    region: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    credentialId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    instances: Type.Optional(Instances),
    confirmTerminate: Type.Optional(Type.Boolean({ description: 'terminate destroys the instance: it runs only with this set to true' })),
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 10, maximum: 3600, description: 'how long to wait for the instance to reach its state; default 300' })),
    maxConcurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'at most this many instances of one event are acted on at once; the others wait their turn (a rolling reboot)' })),
    maxErrors: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: "after this many of one event's instances failed, the instances still waiting are cancelled" })),
    snapshot: Type.Optional(SnapshotOption),
  },
  { additionalProperties: false },
);
export const CliAction = Type.Object(
  {
    type: Type.Literal('cli'),
    runbook: Runbook,
    credentialIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { maxItems: 4, uniqueItems: true, description: "the tenant's credentials the CLI runbook gets, each in its CLI's own environment variables (docs/cli-machine.md); at most one per provider" })),
    timeoutSeconds: Type.Optional(TimeoutSeconds),
    snapshot: Type.Optional(SnapshotOption),
  },
  { additionalProperties: false },
);
export const GraphSnapshotAction = Type.Object(
  {
    type: Type.Literal('graph_snapshot'),
    integrationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
    graphs: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 500 }), { maxItems: 20 })),
    windowMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080 })),
  },
  { additionalProperties: false },
);
export const EmailRunbookAction = Type.Object(
  {
    type: Type.Literal('email_runbook'),
    runbook: Type.Object(
      {
        notes: Type.Optional(Type.String({ minLength: 1, maxLength: 256 * 1024, description: 'the steps for people (Markdown)' })),
        script: Type.Optional(ScriptText),
        runbookId: Type.Optional(Type.String({ format: 'uuid', description: "a stored runbook: its description is mailed as the notes, with its script" })),
        version: Type.Optional(Type.Integer({ minimum: 1, description: 'with runbookId: the version mailed, pinned; absent: the latest' })),
        name: Type.Optional(Type.String({ readOnly: true })),
        resolvedVersion: Type.Optional(Type.Integer({ readOnly: true })),
        sha256: Type.Optional({ ...Sha256, readOnly: true }),
      },
      { additionalProperties: false, description: 'one of {notes, script?} or {runbookId, version?}' },
    ),
    recipients: Type.Optional(Type.Array(Type.String({ format: 'email', maxLength: 320 }), { minItems: 1, maxItems: 50 })),
  },
  { additionalProperties: false },
);
export const Action = tagged([ScriptAction, CloudAction, CliAction, GraphSnapshotAction, EmailRunbookAction]);

export const Target = Type.Object(
  {
    type: Type.Enum(['trigger_host', 'specific_host', 'specific_tags', 'cli_machine']),
    hostname: Type.Optional(Hostname),
    tags: Type.Optional(Type.Array(Tag, { minItems: 1, maxItems: 50, uniqueItems: true })),
    maxConcurrency: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'specific_tags: at most this many hosts run at once; the others wait their turn' })),
    maxErrors: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_000, description: 'specific_tags: after this many failed hosts, the hosts still waiting are cancelled' })),
    pick: Type.Optional(Type.Enum(['all', 'one'], { description: 'specific_tags: every host of the tags (all), or one online host of them, the least recently picked (one); default one for a cron trigger, all otherwise' })),
  },
  { additionalProperties: false },
);

/** The infrastructure types as documented (DESIGN.md §1): the seed's `CLOUD_EC2` and `On_Premise`, and our clouds. */
export const INFRASTRUCTURE_TYPES = ['CLOUD_EC2', 'On_Premise', 'CLOUD_AZURE', 'CLOUD_GCP', 'CLOUD_OPENSTACK'] as const;
// Enums rather than unions of literals: a wrong value gets one message listing the choices.
export const InfrastructureType = Type.Enum([...INFRASTRUCTURE_TYPES]);

export const ActionLimit = Type.Object(
  {
    max: Type.Integer({ minimum: 1, maximum: 100_000 }),
    windowSeconds: Type.Integer({ minimum: 1, maximum: 30 * 86_400 }),
    onLimit: Type.Optional(Type.Enum(['escalate', 'drop'], { description: 'default escalate' })),
  },
  { additionalProperties: false },
);

export const Flapping = Type.Object(
  {
    enabled: Type.Boolean(),
    maxEvents: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
    windowSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 86_400 })),
    cooldownSeconds: Type.Optional(Type.Integer({ minimum: 0, maximum: 86_400 })),
    maxStateChanges: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000, description: 'firing/resolved changes allowed within windowSeconds; default 3' })),
  },
  { additionalProperties: false },
);

/** A person says yes before the action runs (docs/approvals.md). */
export const Approval = Type.Object(
  {
    required: Type.Boolean({ description: "whether each execution waits in awaiting_approval for a person's yes; a cloud terminate asks unless set to false" }),
    role: Type.Optional(Type.Enum(['operator', 'admin'], { description: 'the least role that may approve or reject; default operator' })),
    timeoutSeconds: Type.Optional(Type.Integer({ minimum: 1, maximum: 7 * 86_400, description: 'how long it waits for a decision; default 3600' })),
    onTimeout: Type.Optional(Type.Enum(['expire', 'escalate'], { description: 'past the timeout: expire (default: it never runs), or escalate (it expires and the on-call contacts are told)' })),
  },
  { additionalProperties: false },
);

export const RuleInput = Type.Object(
  {
    name: Name,
    enabled: Type.Optional(Type.Boolean({ description: 'default true' })),
    trigger: TriggerInput,
    action: Action,
    target: Target,
    infrastructureType: InfrastructureType,
    actionLimit: Type.Optional(Type.Union([ActionLimit, Type.Null()])),
    flapping: Type.Optional(Flapping),
    approval: Type.Optional(Type.Union([Approval, Type.Null()])),
  },
  { additionalProperties: false },
);

/**
 * A rule as created: its infrastructure type may be left out (rules/infrastructure.ts gives the
 * default) and is read in any case.
 */
export const RuleBody = Type.Object(
  {
    ...RuleInput.properties,
    infrastructureType: Type.Optional({ ...InfrastructureType, description: 'any case (on_premise), stored as spelt here; default On_Premise, except a cloud action, which names its cloud (CLOUD_EC2...)' }),
  },
  { additionalProperties: false },
);

export const RulePatch = Type.Partial(RuleInput, { additionalProperties: false, minProperties: 1 });

const Timestamp = Type.String({ format: 'date-time' });

export const TriggerView = Type.Object({
  type: Type.String(),
  triggerId: Type.Optional(Type.String({ format: 'uuid' })),
  webhookUrl: Type.Optional(Type.String({ description: 'the tenant API key appears as <api_key>' })),
  curl: Type.Optional(Type.String({ description: 'ready sample; export PITCREW_API_KEY first' })),
  integrationId: Type.Optional(Type.String()),
  alarmName: Type.Optional(Type.String()),
  severity: Type.Optional(Type.Array(Type.String())),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  on: Type.Optional(Type.String()),
  hostLabel: Type.Optional(Type.String()),
  schedule: Type.Optional(Type.String()),
  timezone: Type.Optional(Type.String()),
  overlap: Type.Optional(Type.String()),
});

export const LastEventView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  outcome: Type.String({ description: 'accepted, rule_off, dry_run, no_target, ... (docs/webhook.md)' }),
  receivedAt: Timestamp,
});

export const LastExecutionView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  state: Type.String({ description: 'queued, dispatched, running, succeeded, ... (docs/executions.md)' }),
  hostname: Type.String(),
  queuedAt: Timestamp,
  finishedAt: Type.Union([Timestamp, Type.Null()]),
});

export const RuleView = Type.Object({
  id: Type.String({ format: 'uuid' }),
  name: Type.String(),
  enabled: Type.Boolean(),
  trigger: TriggerView,
  action: Action,
  target: Target,
  infrastructureType: InfrastructureType,
  actionLimit: Type.Union([ActionLimit, Type.Null()]),
  flapping: Flapping,
  approval: Type.Union([Approval, Type.Null()], { description: 'as set; null: none set (a cloud terminate still asks: approvalRequired)' }),
  approvalRequired: Type.Boolean({ description: "whether its executions wait for a person's approval, the terminate default included" }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  lastEvent: Type.Union([LastEventView, Type.Null()], { description: "the rule's newest event" }),
  lastExecution: Type.Union([LastExecutionView, Type.Null()], { description: "the rule's newest execution" }),
  schedule: Type.Optional(Type.Object({
    nextTicks: Type.Array(Timestamp, { description: 'the next ticks, first the one the schedule waits for; empty while the rule is paused' }),
    waitingTick: Type.Union([Timestamp, Type.Null()], { description: 'overlap queue: the tick waiting for the previous run to end' }),
  }, { description: 'cron rules only; the last tick is lastEvent' })),
});

export type RuleInput = Static<typeof RuleInput>;
export type RuleBody = Static<typeof RuleBody>;
export type RulePatch = Static<typeof RulePatch>;
export type Trigger = Static<typeof TriggerInput>;
export type Action = Static<typeof Action>;
export type Target = Static<typeof Target>;
export type ActionLimit = Static<typeof ActionLimit>;
export type Flapping = Static<typeof Flapping>;
export type Approval = Static<typeof Approval>;
export type RuleView = Static<typeof RuleView>;
