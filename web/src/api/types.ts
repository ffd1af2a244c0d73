/*
 * The shapes of the public API (/api/v1, GET /api/v1/openapi.json) that the UI reads and sends.
 * Only the fields the UI uses; the service may send more.
 */

export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

export type TriggerType = 'webhook' | 'alert' | 'cron';
export type TargetType = 'trigger_host' | 'specific_host' | 'specific_tags' | 'cli_machine';
export type InfrastructureType = 'On_Premise' | 'CLOUD_EC2' | 'CLOUD_AZURE' | 'CLOUD_GCP' | 'CLOUD_OPENSTACK';
export type Interpreter = 'sh' | 'bash' | 'python' | 'pwsh';
export type Flavour = 'autofix' | 'diagnostics';

/** A runbook written into the rule. */
export interface InlineRunbook {
  script: string;
  interpreter?: Interpreter;
  notes?: string;
  /** Shown by the service, ignored when sent. */
  sha256?: string;
}

/** A stored runbook (docs/runbooks.md): no version follows the latest, a version pins it. The rule's view adds what it resolves to now. */
export interface StoredRunbookRef {
  runbookId: string;
  version?: number;
  name?: string;
  /** The version a run would take now: the pinned one, or the latest. */
  resolvedVersion?: number;
  interpreter?: Interpreter;
  sha256?: string;
}

/** A file in one of the tenant's git repositories, fetched before each run; no ref: the repository's own. */
export interface RepositoryRunbookRef {
  repositoryId: string;
  path: string;
  ref?: string;
  interpreter?: Interpreter;
}

/** The runbook of a script or CLI action: written into the rule, stored in pitcrew, or a file in a repository. */
export type Runbook = InlineRunbook | StoredRunbookRef | RepositoryRunbookRef;

export type Action =
  | { type: 'script'; flavour: Flavour; runbook: Runbook; timeoutSeconds?: number; snapshot?: SnapshotRequest }
  | CloudAction
  | { type: 'cli'; runbook: Runbook; credentialIds?: string[]; timeoutSeconds?: number; snapshot?: SnapshotRequest }
  | ({ type: 'graph_snapshot' } & SnapshotRequest)
  | { type: 'email_runbook'; runbook: { notes: string; script?: string } | StoredRunbookRef; recipients?: string[] };

/** What a graph_snapshot action, or a fix's "capture graphs too", captures (docs/graph-snapshots.md). */
export interface SnapshotRequest {
  /** Absent: the alert trigger's integration. */
  integrationId?: string;
  /** Queries or panels in the tool's terms; absent: the alert's own. */
  graphs?: string[];
  windowMinutes?: number;
}

export type CloudProvider = 'aws' | 'azure' | 'gcp' | 'openstack';
export type CloudOperation = 'start' | 'stop' | 'reboot' | 'terminate';

/** The instances a cloud action acts on: named by the payload (default field InstanceId), a fixed list, or a provider tag filter. */
export type CloudInstances = { from: 'payload'; field?: string } | { ids: string[] } | { tags: Record<string, string> };

/** A VM operation at a cloud provider with one of the tenant's credentials (docs/cloud-actions.md). */
export interface CloudAction {
  type: 'cloud';
  snapshot?: SnapshotRequest;
  /** Absent: the provider of the rule's infrastructureType. */
  provider?: CloudProvider;
  operation: CloudOperation;
  region?: string;
  credentialId?: string;
  instances?: CloudInstances;
  /** terminate runs only with this true. */
  confirmTerminate?: boolean;
  /** How long to wait for the instance to reach its state (10..3600, default 300). */
  timeoutSeconds?: number;
  /** The instances' fan-out: at most so many at once; the waiting ones cancelled after so many failed. */
  maxConcurrency?: number;
  maxErrors?: number;
}

export interface Target {
  type: TargetType;
  hostname?: string;
  tags?: string[];
  /** specific_tags only: at most this many hosts of one event run at once. */
  maxConcurrency?: number;
  /** specific_tags only: after this many failed hosts, the ones still waiting are cancelled. */
  maxErrors?: number;
  /** specific_tags only: every host of the tags, or one online host of them (least recently picked); default one for a cron trigger, all otherwise. */
  pick?: TargetPick;
}

export type TargetPick = 'all' | 'one';

export interface ActionLimit {
  max: number;
  windowSeconds: number;
  onLimit?: 'escalate' | 'drop';
}

export interface Flapping {
  enabled: boolean;
  maxEvents?: number;
  windowSeconds?: number;
  cooldownSeconds?: number;
  maxStateChanges?: number;
}

export interface Trigger {
  type: TriggerType;
  triggerId?: string;
  webhookUrl?: string;
  curl?: string;
  integrationId?: string;
  alarmName?: string;
  severity?: string[];
  labels?: Record<string, string>;
  on?: AlertOn;
  hostLabel?: string;
  /** cron: 5 fields, or 6 with seconds first. */
  schedule?: string;
  /** cron: an IANA zone the schedule is read in; absent: UTC. */
  timezone?: string;
  /** cron: what a tick does while the previous run has not ended; absent: skip. */
  overlap?: Overlap;
}

export type AlertOn = 'firing' | 'resolved' | 'both';
export type Overlap = 'skip' | 'queue' | 'allow';

/** POST /api/v1/schedules/preview: a schedule's next ticks, as the rule would fire them. */
export interface SchedulePreviewInput {
  schedule: string;
  timezone?: string;
  count?: number;
}

export interface SchedulePreview {
  timezone: string;
  /** `at` is UTC; `local` the wall clock of the zone, "2026-11-26 03:00:00 CET". */
  ticks: Array<{ at: string; local: string }>;
}

export interface RuleInput {
  name: string;
  enabled?: boolean;
  trigger: Omit<Trigger, 'triggerId' | 'webhookUrl' | 'curl'>;
  action: Action;
  target: Target;
  infrastructureType: InfrastructureType;
  actionLimit?: ActionLimit | null;
  flapping?: Flapping;
}

export interface Rule {
  id: string;
  name: string;
  enabled: boolean;
  trigger: Trigger;
  action: Action;
  target: Target;
  infrastructureType: InfrastructureType;
  actionLimit: ActionLimit | null;
  flapping: Required<Flapping>;
  createdAt: string;
  updatedAt: string;
  lastEvent: { id: string; outcome: Outcome; receivedAt: string } | null;
  lastExecution: { id: string; state: ExecutionState; hostname: string; queuedAt: string; finishedAt: string | null } | null;
  /** Cron rules only; their last tick is lastEvent. */
  schedule?: {
    /** The next ticks, first the one the schedule waits for; empty while the rule is off (paused). */
    nextTicks: string[];
    /** overlap queue: the tick waiting for the previous run to end. */
    waitingTick: string | null;
  };
}

/** Who asked for an event (Run now): a management token today, a user later. */
export type RequestedBy = { type: 'token'; id: string; name: string };

export const OUTCOMES = ['accepted', 'recorded', 'rule_off', 'dry_run', 'no_target', 'flapping', 'limited', 'duplicate'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export interface RuleEvent {
  id: string;
  ruleId: string;
  outcome: Outcome;
  reason: string | null;
  receivedAt: string;
  /** What raised it: webhook, an integration's type, test, cron, manual (Run now). */
  source: string;
  /** Who asked, for a manual run; null when a trigger raised it. */
  requestedBy: RequestedBy | null;
  sourceIp: string | null;
  payload: Record<string, unknown>;
  env: Record<string, string>;
  skippedEnv: Array<{ name: string; reason: string }>;
  /** The first 100 of the event's executions; executionCount says how many there are. */
  executionIds: string[];
  executionCount: number;
  idempotencyKey: string | null;
}

export const EXECUTION_STATES = ['awaiting_approval', 'queued', 'dispatched', 'running', 'succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'expired', 'rejected'] as const;
export type ExecutionState = (typeof EXECUTION_STATES)[number];

export interface Execution {
  id: string;
  ruleId: string;
  eventId: string;
  hostId: string | null;
  hostname: string;
  state: ExecutionState;
  /** script: on the host by its agent; email_runbook: sent by the service, on no host; cloud: a call by the service, `hostname` is the instance. */
  actionType: 'script' | 'email_runbook' | 'cloud' | 'cli' | 'graph_snapshot';
  reason: string | null;
  flavour: string;
  interpreter: string;
  timeoutSeconds: number;
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  queuedAt: string;
  dispatchedAt: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  durationMs: number | null;
  cancelRequested: boolean;
  /** Queued, waiting for a slot of its fan-out's maxConcurrency. */
  held: boolean;
  /** Queued, waiting for its runbook to be read from its git repository before dispatch. */
  awaitingRunbook?: boolean;
  /** The script that ran (or runs); null while a repository's file is still being fetched. */
  script?: string | null;
  /** Where the script came from; null for kinds that run no script. */
  runbook?: ExecutionRunbook | null;
  /** The terms it waited for a person's approval under (docs/approvals.md); null: it never waited. */
  approval?: { role: string; timeoutSeconds: number; onTimeout: string; deadline: string; approvedAt: string | null } | null;
  transitions?: Array<{ from: string | null; to: string; reason: string | null; at: string; decidedBy?: { userId: string; email: string | null; via: string; comment?: string } }>;
  artifacts?: Array<{ id: string; name: string; size: number }>;
  /** The graphs captured: a graph_snapshot run's, or for a fix, those its event's capture took. */
  snapshots?: Snapshot[];
}

/** A graph snapshot (docs/graph-snapshots.md); `url` answers with the session's authentication. */
export interface Snapshot {
  id: string;
  title: string;
  query: string;
  contentType: string;
  width: number;
  height: number;
  bytes: number;
  /** The graph_snapshot execution that captured it, and its event. */
  executionId: string;
  eventId: string;
  url: string;
}

/** A graph the wizard's Preview captured now, not stored. */
export interface SnapshotPreview {
  title: string;
  query: string;
  contentType: string;
  width: number;
  height: number;
  bytes: number;
  dataUrl: string;
}

/** Which runbook an execution ran: a stored runbook's version, a repository's file at a commit, or the script written in the rule (sha256 only). */
export interface ExecutionRunbook {
  runbookId?: string;
  version?: number;
  name?: string;
  repositoryId?: string;
  repositoryName?: string;
  path?: string;
  ref?: string;
  commit?: string;
  /** What the agent checked before it ran the script; absent until a repository's file is read. */
  sha256?: string;
}

export interface Host {
  id: string;
  hostname: string;
  tags: string[];
  agentTags: string[];
  managedTags: string[];
  status: 'online' | 'offline';
  lastSeenAt: string | null;
  enrolledAt: string;
  agentVersion: string;
  /** An older release than this service's (AgentInstall.version): it works; the hosts page offers the update. */
  outdated: boolean;
  os: string;
  arch: string;
}

export interface HostEnrolment {
  id: string;
  kind: 'enrolled' | 'replaced';
  at: string;
  hostname: string;
  apiKeyId: string;
  apiKeyName: string;
  sourceIp: string;
  agentVersion: string;
  os: string;
  wasOnline: boolean;
}

export interface HostCount {
  count: number;
  online: number;
}

export interface AgentInstall {
  server: string;
  fingerprint: string;
  download: { url: string; sha256: string; size: number } | null;
  install: string;
  start: string;
  /** This service's release, which its agent file is. */
  version: string;
  /** Replaces an installed agent with this service's and restarts it. */
  update: string;
}

export type ApiKeyScope = 'webhook' | 'enrol';

export interface ApiKey {
  id: string;
  name: string;
  /** webhook: fires webhook triggers; enrol: enrols agents. */
  scopes: ApiKeyScope[];
  hint: string;
  createdAt: string;
  lastUsedAt: string | null;
  revokedAt: string | null;
  replacedBy: string | null;
}

export interface IssuedApiKey extends ApiKey {
  apiKey: string;
}

export interface Throttle {
  ratePerSecond: number;
  burst: number;
}

export interface Tenant {
  id: string;
  name: string;
  /** IPv4/IPv6 CIDRs webhooks are accepted from; empty: every address. */
  ipAllowlist: string[];
  /** IPv4/IPv6 CIDRs agents may enrol from; empty: every address. */
  agentAllowlist: string[];
  /** null: the service defaults. */
  throttle: Throttle | null;
  createdAt: string;
  /** Days the service keeps history (PITCREW_RETENTION_DAYS); null: for ever. */
  retentionDays: number | null;
  incidents: IncidentSettings;
}

/** How the tenant's incidents resolve (docs/incidents.md, "Settings"). */
export interface IncidentSettings {
  /** An incident resolved within this long after a pitcrew fix of it ended is automation's. */
  automationWindowSeconds: number;
  /** An incident a webhook call opened closes after this long without another call. */
  quietSeconds: number;
}

export interface TenantPatch {
  ipAllowlist?: string[];
  agentAllowlist?: string[];
  throttle?: Throttle | null;
  incidents?: Partial<IncidentSettings>;
}

/** The states GET /api/v1/escalations accepts as a filter. */
export const ESCALATION_STATES = ['pending', 'notified'] as const;

export interface Escalation {
  id: string;
  ruleId: string;
  hostId: string;
  hostname: string;
  /** pending: waiting for the notifier; notified: sent to the escalation contacts and channels. */
  state: string;
  reason: string;
  windowStart: string;
  windowEnd: string;
  limitedEvents: number;
  firstEventId: string;
  lastEventId: string;
  createdAt: string;
  updatedAt: string;
}

export interface HostLimitUsage {
  /** null for runs the service makes itself (email_runbook), counted per host they are about. */
  hostId: string | null;
  hostname: string;
  used: number;
  max: number;
  remaining: number;
  /** The next alarm for this host is escalated or dropped instead of acting. */
  limited: boolean;
  nextSlotAt: string | null;
  escalation: Escalation | null;
}

export interface LimitUsage {
  ruleId: string;
  actionLimit: ActionLimit | null;
  asOf: string;
  hosts: HostLimitUsage[];
}
