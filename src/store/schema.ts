import type { Generated, Insertable, Selectable } from 'kysely';

/*
 * Portable column conventions, identical on SQLite and PostgreSQL:
 * times are epoch milliseconds (bigint), flags are integers 0/1, structured values are JSON text.
 */

export interface TenantsTable {
  id: string;
  name: string;
  ip_allowlist: string; // JSON array of CIDR strings; empty means every address
  throttle: string | null; // JSON {ratePerSecond, burst}; null means the service defaults
  created_at: number;
  agent_allowlist: string; // JSON array of CIDR strings agents may enrol from; empty means every address
  /** A resolution within this long of a pitcrew fix is automation's (migration 0026; 3600 by default). */
  incident_automation_seconds: Generated<number>;
  /** An incident a webhook call opened closes after this long without another call (migration 0026; 1800 by default). */
  incident_quiet_seconds: Generated<number>;
}

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  name: string;
  hash: string; // SHA-256 hex of the key; the key itself is never stored
  hint: string; // last 4 characters, to tell keys apart in lists
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  replaced_by: string | null;
  scopes: string; // JSON array of 'webhook' | 'enrol' (tenants/scopes.ts)
}

export interface TokensTable {
  id: string;
  tenant_id: string;
  name: string;
  hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
  /** The user whose personal access token this is (identity/tokens.ts). */
  user_id: string | null;
  /** At most the user's role; null: the user's role, whatever it becomes. */
  role: string | null;
  expires_at: number | null;
}

/** A person (identity/users.ts): global, by e-mail; what they may do is per tenant (memberships). */
export interface UsersTable {
  id: string;
  email: string | null; // lowercased; null until the first owner claims a bootstrap account
  password_hash: string | null; // identity/passwords.ts; null: no password sign-in (invited, or SSO only)
  totp_secret: string | null; // sealed (SecretBox); null: no second factor
  failed_logins: number;
  locked_until: number | null;
  created_at: number;
  last_sign_in_at: number | null;
  disabled_at: number | null;
}

export interface MembershipsTable {
  user_id: string;
  tenant_id: string;
  role: string; // identity/roles.ts
  created_at: number;
}

export interface SessionsTable {
  id: string;
  user_id: string;
  tenant_id: string; // the tenant the session acts in (a user switches between theirs)
  hash: string; // SHA-256 of the cookie's secret
  via: string; // how the person signed in: password | oidc | saml | link
  ip: string | null;
  created_at: number;
  last_seen_at: number;
  expires_at: number; // the absolute expiry; the idle one counts from last_seen_at
  revoked_at: number | null;
}

/** A one-time link: an invitation to a tenant, the first owner's sign-in, or a password reset. */
export interface InvitationsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  purpose: string; // invite | reset
  hash: string;
  created_by: string | null;
  created_at: number;
  expires_at: number;
  used_at: number | null;
}

export interface RulesTable {
  id: string;
  tenant_id: string;
  name: string;
  enabled: number;
  trigger_type: string;
  trigger_id: string | null;
  /** Set for alert triggers: the integration whose alerts raise the rule. */
  integration_id: string | null;
  trigger: string;
  action: string;
  target: string;
  infrastructure_type: string;
  action_limit: string | null;
  flapping: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  /** The stored runbook its action runs (migration 0020): rules following it are rewritten when it is saved. */
  runbook_id: string | null;
  /** The git repository its action's runbook is read from (migration 0020). */
  repository_id: string | null;
  /** JSON approval setting (migration 0033); null: none set (a terminate action still asks, rules/approval.ts). */
  approval: Generated<string | null>;
}

export interface IntegrationsTable {
  id: string;
  tenant_id: string;
  name: string;
  /** alertmanager | grafana | monasca | zabbix | datadog | pagerduty | cloudwatch_sns | generic */
  type: string;
  config: string;
  /** AES-256-GCM sealed secret (identity/secret-box.ts): a signing secret or a tool's token. */
  secret: string | null;
  /** Sealed JSON: what the integration's graphs are read with (integrations/graph-secret.ts, migration 0035). */
  graph_secret: string | null;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
  last_alert_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  rule_id: string;
  /** Null when the service raised the event itself (a schedule). */
  api_key_id: string | null;
  /** What raised it: webhook, an integration's type, test, cron, or manual (Run now). */
  source: string;
  /** Who asked, as JSON (identity/requested-by.ts), when a person raised it (Run now); else null. */
  requested_by: string | null;
  outcome: string;
  reason: string | null;
  received_at: number;
  source_ip: string | null;
  payload: string;
  env: string;
  skipped_env: string;
  /** The payload's host, lowercase; '' when it names none. */
  host_key: string;
  /** firing | resolved as known after this event; null while no payload said. */
  alarm_state: string | null;
  state_changed: number;
  idempotency_key: string | null;
  /** The incident the event belongs to (migration 0026): an integration's alert, or a webhook call naming an alarm and a host. */
  incident_id?: string | null;
  /** The incident's event before this one: its events are a chain from its `last_event_id` (migration 0032). */
  incident_previous_id?: string | null;
}


export interface HostsTable {
  id: string;
  tenant_id: string;
  hostname: string;
  hostname_key: string;
  /** The key's first DNS label ("web-1" of "web-1.example.com"): a name without its domain finds the host. */
  hostname_short: string;
  tags: string;
  agent_tags: string;
  managed_tags: string;
  os: string;
  arch: string;
  agent_version: string;
  token_hash: string;
  enrolled_at: number;
  last_seen_at: number | null;
  /** The agent connection holding this host now, and the service node it is on; null when offline. */
  session_id: string | null;
  node_id: string | null;
  /** When a tag target that picks one host last picked it (migration 0015). */
  last_picked_at: number | null;
  /** The host's VM at its cloud provider, set through the API (migration 0018): what a cloud action on it acts on. */
  cloud_instance_id: string | null;
}

/** One enrolment of a host's agent: append-only, the host's history of who took its name. */
export interface HostEnrolmentsTable {
  id: string;
  tenant_id: string;
  host_id: string;
  kind: string; // enrolled | replaced
  hostname: string;
  api_key_id: string;
  api_key_name: string;
  source_ip: string;
  agent_version: string;
  os: string;
  was_online: number;
  at: number;
}

export interface HostTagsTable {
  host_id: string;
  tenant_id: string;
  tag: string;
}

export interface ExecutionsTable {
  id: string;
  tenant_id: string;
  rule_id: string;
  event_id: string;
  host_id: string | null;
  /** The host's name when the execution was queued (a service run: the host it is about). */
  hostname: string;
  /** hostKey(hostname): what `?hostname=` compares, without case. */
  host_key: string;
  state: string;
  reason: string | null;
  spec: string;
  exit_code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  stdout_truncated: number;
  stderr_truncated: number;
  queued_at: number;
  dispatched_at: number | null;
  started_at: number | null;
  finished_at: number | null;
  expires_at: number;
  session_id: string | null;
  node_id: string | null;
  cancel_requested_at: number | null;
  late_result: string | null;
  /** 1 while a fan-out's maxConcurrency holds it back (docs/safety.md). */
  held: number;
  fanout_max_concurrency: number | null;
  fanout_max_errors: number | null;
  /** JSON tags a one-host target picked this run's host from: it may move to another of them before it starts. */
  /** 1: a graph_snapshot run beside its rule's fix ("capture graphs too"), outside the action limit's count (migration 0031). */
  companion: Generated<number>;
  placement: string | null;
  /** 1 while its script is still to be read from a git repository: held from dispatch until then (migration 0020). */
  awaiting_runbook: number;
  /** JSON terms it waited for a person's approval under (migration 0033); null: it never waited. */
  approval: Generated<string | null>;
  /** When a person approved it: from then it counts in its rule's action limit (migration 0033). */
  approved_at: Generated<number | null>;
}

export interface ExecutionTransitionsTable {
  id: string;
  execution_id: string;
  from_state: string | null;
  to_state: string;
  reason: string | null;
  at: number;
  /** JSON {userId, email, via, comment?}: the person whose decision made this move (migration 0033). */
  decided_by: Generated<string | null>;
}

export interface ExecutionArtifactsTable {
  id: string;
  execution_id: string;
  name: string;
  size: number;
  content: string;
}

/** snapshots/repository.ts: one picture a graph_snapshot execution captured (migration 0031). */
export interface GraphSnapshotsTable {
  id: string;
  tenant_id: string;
  execution_id: string;
  event_id: string;
  /** The graph's place among its execution's (the rule's graphs in order). */
  position: number;
  title: string;
  query: string;
  content_type: string;
  width: number;
  height: number;
  bytes: number;
  image: Uint8Array;
  created_at: number;
}

export interface EscalationsTable {
  id: string;
  tenant_id: string;
  rule_id: string;
  host_id: string;
  hostname: string;
  /** hostKey(hostname): what `?hostname=` compares, without case. */
  host_key: string;
  window_start: number;
  window_end: number;
  /** pending until the notifier delivers it. */
  state: string;
  reason: string;
  limited_events: number;
  /** The limit's max when the escalation was raised; null on rows older than migration 0007. */
  limit_max: number | null;
  /** What the limit kept pitcrew from doing, as the message says it; null on older rows. */
  not_done: string | null;
  first_event_id: string;
  last_event_id: string;
  created_at: number;
  updated_at: number;
}

export interface IdempotencyKeysTable {
  rule_id: string;
  key: string;
  tenant_id: string;
  event_id: string;
  /** SHA-256 of the body, to tell a retry from a different call reusing the key. */
  fingerprint: string;
  created_at: number;
}

export interface NodesTable {
  id: string;
  started_at: number;
  heartbeat_at: number;
}

export interface NotifyChannelsTable {
  id: string;
  tenant_id: string;
  name: string;
  type: string;
  mode: string;
  config: string; // JSON: the settings that are not secret
  secrets: string | null; // AES-256-GCM sealed JSON of the secret settings (identity/secret-box.ts)
  rule_ids: string | null; // JSON array; null: every rule
  created_at: number;
  updated_at: number;
  last_delivered_at: number | null;
  last_error: string | null;
  last_error_at: number | null;
}

export interface NotifyContactsTable {
  tenant_id: string;
  emails: string; // JSON array
  channel_ids: string; // JSON array
  email_channel_id: string | null;
  updated_at: number;
}

export interface NotifyPendingTable {
  execution_id: string;
  event_id: string;
  tenant_id: string;
  at: number;
}

export interface NotifyMessagesTable {
  id: string;
  tenant_id: string;
  kind: string;
  dedupe_key: string;
  severity: string;
  rule_id: string | null;
  execution_id: string | null;
  title: string;
  body: string; // JSON Notification (notify/notification.ts)
  created_at: number;
}

/** Slack clicks answered 200 and not yet decided (migration 0040). */
export interface SlackClicksTable {
  id: string;
  tenant_id: string;
  channel_id: string;
  execution_id: string;
  verdict: string;
  slack_user_id: string;
  response_url: string | null;
  ip: string;
  received_at: number;
  claimed_until: number;
}

export interface NotifyDeliveriesTable {
  id: string;
  message_id: string;
  tenant_id: string;
  channel_id: string;
  audience: string;
  recipients: string | null;
  state: string;
  attempts: number;
  next_attempt_at: number;
  lease_owner: string | null;
  lease_until: number | null;
  last_error: string | null;
  delivered_at: number | null;
  created_at: number;
  message_ref: string | null; // JSON: where a chat message landed, to update it (migration 0036)
}

export interface NotifyAttemptsTable {
  id: string;
  tenant_id: string;
  channel_id: string;
  delivery_id: string | null;
  message_kind: string;
  title: string;
  attempt: number;
  ok: number;
  status: string | null;
  error: string | null;
  duration_ms: number;
  at: number;
}

/** Each enabled cron rule's next tick (migration 0015). */
export interface SchedulesTable {
  rule_id: string;
  tenant_id: string;
  next_at: number;
  last_tick_at: number | null;
  updated_at: number;
  /** overlap queue: the tick waiting for the rule's previous run to end. */
  waiting_tick: number | null;
}

/** A tenant's cloud credential (migration 0017): the secret sealed, the summary shown. */
export interface CredentialsTable {
  id: string;
  tenant_id: string;
  name: string;
  provider: string;
  secret: string;
  /** JSON: the non-secret identifiers, masked, that people see. */
  summary: string;
  created_at: number;
  updated_at: number;
  last_test_at: number | null;
  last_test_ok: number | null;
  last_test_message: string | null;
}

/** A tenant's runbook (migration 0019): its latest version's name and number. */
export interface RunbooksTable {
  id: string;
  tenant_id: string;
  name: string;
  latest_version: number;
  created_at: number;
  updated_at: number;
  /** The management token that created it, when known. */
  created_by: string | null;
}

/** One immutable save of a runbook (migration 0019); never updated, deleted only with its runbook. */
export interface RunbookVersionsTable {
  runbook_id: string;
  version: number;
  name: string;
  description: string;
  interpreter: string;
  script: string;
  env: string; // JSON array of environment names
  sha256: string; // hex, of the script's UTF-8 bytes
  created_at: number;
  created_by: string | null;
}

/** A tenant's git repository runbooks are read from (migration 0021); the credential sealed. */
export interface RepositoriesTable {
  id: string;
  tenant_id: string;
  name: string;
  url: string;
  ref: string;
  auth: string; // 'none' | 'token' | 'ssh_key'
  credential: string | null; // sealed JSON (runbooks/git/schema.ts StoredCredential)
  known_hosts: string | null;
  created_at: number;
  updated_at: number;
  last_test_at: number | null;
  last_test_ok: number | null;
  last_test_message: string | null;
  last_test_commit: string | null;
}

/** Every alert an integration took (migration 0014). */
export interface AlertsTable {
  id: string;
  tenant_id: string;
  integration_id: string;
  received_at: number;
  source: string;
  state: string;
  fingerprint: string;
  alarm_name: string | null;
  host_name: string | null;
  severity: string | null;
  labels: string;
  annotations: string;
  events: string;
  /** The incident the alert belongs to (migration 0026); null for a test alert, and for alerts before incidents. */
  incident_id?: string | null;
  /** The incident's alert before this one: its alerts are a chain from its `last_alert_id` (migration 0032). */
  incident_previous_id?: string | null;
}

/** incidents/: one occurrence of an alarm on a host (migration 0026, docs/incidents.md). */
export interface IncidentsTable {
  id: string;
  tenant_id: string;
  integration_id: string | null;
  incident_key: string;
  state: 'open' | 'resolved';
  alarm_name: string;
  severity: string | null;
  hostname: string | null;
  host_key: string;
  opened_at: number;
  resolved_at: number | null;
  last_seen_at: number;
  last_fired_at: number;
  last_fingerprint: string | null;
  occurrences: number;
  resolved_by: 'tool' | 'automation' | 'manual' | null;
  resolved_by_user: string | null;
  last_fix_at: number | null;
  /** JSON array of rule ids. */
  rule_ids: string;
  /** JSON array of the first 100 execution ids. */
  execution_ids: string;
  execution_count: number;
  /** Its newest alert and event, each naming the one before (`incident_previous_id`), and how many it has had (migration 0032). */
  last_alert_id: string | null;
  alert_count: number;
  last_event_id: string | null;
  event_count: number;
}

/**
 * incidents/rollup.ts: per UTC day of resolution, the resolved incidents of one alarm, derived from
 * `incidents` (migration 0028). '' stands for no integration (a webhook's alarm) and no severity.
 */
export interface IncidentDaysTable {
  tenant_id: string;
  /** Days since 1970-01-01 UTC. */
  day: number;
  integration_id: string;
  alarm_name: string;
  severity: string;
  resolved: number;
  automated: number;
  total_ms: number;
  max_ms: number;
}

/** incidents/rollup.ts: per UTC day of resolution, the resolved incidents of one host (migration 0029). */
export interface IncidentHostDaysTable {
  tenant_id: string;
  day: number;
  host_key: string;
  resolved: number;
}

/** Days of `incident_days` and `incident_host_days` to recompute: marked by triggers on `incidents` (migration 0028). */
export interface IncidentDaysStaleTable {
  tenant_id: string;
  day: number;
}

/** identity/audit/: one row per change made through the management API, never updated. */
export interface AuditLogTable {
  id: string;
  tenant_id: string;
  at: number;
  /** JSON: identity/audit/entry.ts AuditActor. */
  actor: string;
  /** The user's, the token's or the API key's id. */
  actor_id: string;
  /** The person: the user, or the token's user; null for an API key. */
  actor_user_id: string | null;
  /** Lowercased, for the actor filter; null for an API key. */
  actor_email: string | null;
  via: string;
  ip: string | null;
  action: string;
  target_type: string;
  target_id: string | null;
  /** JSON views, secrets masked; null where there is none (a create has no before). */
  before: string | null;
  after: string | null;
}

/** An integration's import settings and the status of its last import (migration 0027, src/imports/). */
export interface IntegrationImportsTable {
  integration_id: string;
  tenant_id: string;
  enabled: number;
  interval_seconds: number;
  lookback_days: number;
  requests_per_second: number;
  /** A stored credential the import reads with (CloudWatch: an AWS one), instead of `secret`. */
  credential_id: string | null;
  /** The read-only secret, JSON, sealed (SecretBox, owner `<integration id>:import`). */
  secret: string | null;
  /** The tool's own position where the last committed page stopped (opaque to all but its importer); null before the first. */
  cursor: string | null;
  /** When the next scheduled import is due; null while the import is disabled. */
  next_at: number | null;
  last_import_id: string | null;
  last_state: string | null;
  last_started_at: number | null;
  last_ended_at: number | null;
  last_imported: number | null;
  last_error: string | null;
  last_error_at: number | null;
  imported_total: number;
  created_at: number;
  updated_at: number;
}

/** One import run (src/imports/): queued | running | succeeded | failed. */
export interface ImportsTable {
  id: string;
  tenant_id: string;
  integration_id: string;
  /** schedule | manual */
  trigger: string;
  state: string;
  queued_at: number;
  started_at: number | null;
  ended_at: number | null;
  imported: number;
  pages: number;
  error: string | null;
  /** Where this import had reached (the integration's cursor after its last committed page). */
  cursor: string | null;
  /** The node running it, and the token of its claim: a page commits only while the claim holds. */
  node_id: string | null;
  claim: string | null;
}

export interface SsoProvidersTable {
  id: string;
  tenant_id: string;
  type: 'oidc' | 'saml';
  name: string;
  /** JSON: the provider's non-secret settings (issuer, client id, scopes; or the IdP metadata XML). */
  config: string;
  /** The OIDC client secret, sealed (SecretBox, owner: the row's id); null for public clients and SAML. */
  client_secret: string | null;
  /** JSON: identity/sso/role-mapping.ts's RoleMapping. */
  role_mapping: string;
  jit: number;
  required: number;
  created_at: number;
  updated_at: number;
}

export interface SsoPendingTable {
  /** The OIDC state, or the SAML request id: what the identity provider's answer carries back. */
  key: string;
  provider_id: string;
  /** JSON: what the answer is checked against (nonce, PKCE verifier, returnTo, test mode). */
  data: string;
  expires_at: number;
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  tokens: TokensTable;
  users: UsersTable;
  memberships: MembershipsTable;
  sessions: SessionsTable;
  invitations: InvitationsTable;
  rules: RulesTable;
  integrations: IntegrationsTable;
  alerts: AlertsTable;
  incidents: IncidentsTable;
  incident_days: IncidentDaysTable;
  incident_days_stale: IncidentDaysStaleTable;
  incident_host_days: IncidentHostDaysTable;
  schedules: SchedulesTable;
  credentials: CredentialsTable;
  runbooks: RunbooksTable;
  runbook_versions: RunbookVersionsTable;
  repositories: RepositoriesTable;
  sso_providers: SsoProvidersTable;
  sso_pending: SsoPendingTable;
  integration_imports: IntegrationImportsTable;
  imports: ImportsTable;
  events: EventsTable;
  hosts: HostsTable;
  host_tags: HostTagsTable;
  host_enrolments: HostEnrolmentsTable;
  executions: ExecutionsTable;
  execution_transitions: ExecutionTransitionsTable;
  execution_artifacts: ExecutionArtifactsTable;
  graph_snapshots: GraphSnapshotsTable;
  nodes: NodesTable;
  escalations: EscalationsTable;
  idempotency_keys: IdempotencyKeysTable;
  notify_channels: NotifyChannelsTable;
  notify_contacts: NotifyContactsTable;
  notify_pending: NotifyPendingTable;
  notify_messages: NotifyMessagesTable;
  notify_deliveries: NotifyDeliveriesTable;
  notify_attempts: NotifyAttemptsTable;
  slack_clicks: SlackClicksTable;
  audit_log: AuditLogTable;
}

export type TenantRow = Selectable<TenantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type TokenRow = Selectable<TokensTable>;
export type UserRow = Selectable<UsersTable>;
export type SessionRow = Selectable<SessionsTable>;
export type RuleRow = Selectable<RulesTable>;
export type IntegrationRow = Selectable<IntegrationsTable>;
export type AlertRow = Selectable<AlertsTable>;
export type IncidentRow = Selectable<IncidentsTable>;
export type NewRuleRow = Insertable<RulesTable>;
export type EventRow = Selectable<EventsTable>;
export type NewEventRow = Insertable<EventsTable>;
export type HostRow = Selectable<HostsTable>;
export type HostEnrolmentRow = Selectable<HostEnrolmentsTable>;
export type ExecutionRow = Selectable<ExecutionsTable>;
export type NewExecutionRow = Insertable<ExecutionsTable>;
export type CredentialRow = Selectable<CredentialsTable>;
export type RunbookRow = Selectable<RunbooksTable>;
export type RunbookVersionRow = Selectable<RunbookVersionsTable>;
export type RepositoryRow = Selectable<RepositoriesTable>;
export type EscalationRow = Selectable<EscalationsTable>;
export type NotifyChannelRow = Selectable<NotifyChannelsTable>;
export type NotifyDeliveryRow = Selectable<NotifyDeliveriesTable>;
export type NotifyMessageRow = Selectable<NotifyMessagesTable>;
export type NotifyAttemptRow = Selectable<NotifyAttemptsTable>;
export type SlackClickRow = Selectable<SlackClicksTable>;
export type AuditLogRow = Selectable<AuditLogTable>;
export type IntegrationImportRow = Selectable<IntegrationImportsTable>;
export type ImportRow = Selectable<ImportsTable>;
