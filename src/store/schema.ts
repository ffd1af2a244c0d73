import type { Insertable, Selectable } from 'kysely';

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
}

export interface TokensTable {
  id: string;
  tenant_id: string;
  name: string;
  hash: string;
  created_at: number;
  last_used_at: number | null;
  revoked_at: number | null;
}

export interface RulesTable {
  id: string;
  tenant_id: string;
  name: string;
  enabled: number;
  trigger_type: string;
  trigger_id: string | null;
  trigger: string;
  action: string;
  target: string;
  infrastructure_type: string;
  action_limit: string | null;
  flapping: string;
  created_at: number;
  updated_at: number;
  deleted_at: number | null;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  rule_id: string;
  api_key_id: string | null;
  outcome: string;
  reason: string | null;
  received_at: number;
  source_ip: string | null;
  payload: string;
  env: string;
  skipped_env: string;
}


export interface HostsTable {
  id: string;
  tenant_id: string;
  hostname: string;
  hostname_key: string;
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
  hostname: string;
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
}

export interface ExecutionTransitionsTable {
  id: string;
  execution_id: string;
  from_state: string | null;
  to_state: string;
  reason: string | null;
  at: number;
}

export interface ExecutionArtifactsTable {
  id: string;
  execution_id: string;
  name: string;
  size: number;
  content: string;
}

export interface NodesTable {
  id: string;
  started_at: number;
  heartbeat_at: number;
}

export interface Database {
  tenants: TenantsTable;
  api_keys: ApiKeysTable;
  tokens: TokensTable;
  rules: RulesTable;
  events: EventsTable;
  hosts: HostsTable;
  host_tags: HostTagsTable;
  executions: ExecutionsTable;
  execution_transitions: ExecutionTransitionsTable;
  execution_artifacts: ExecutionArtifactsTable;
  nodes: NodesTable;
}

export type TenantRow = Selectable<TenantsTable>;
export type ApiKeyRow = Selectable<ApiKeysTable>;
export type RuleRow = Selectable<RulesTable>;
export type NewRuleRow = Insertable<RulesTable>;
export type EventRow = Selectable<EventsTable>;
export type NewEventRow = Insertable<EventsTable>;
export type HostRow = Selectable<HostsTable>;
export type ExecutionRow = Selectable<ExecutionsTable>;
export type NewExecutionRow = Insertable<ExecutionsTable>;
