import type { HostFacts } from './decide.js';

/** A host row as the engine reads it to pick targets. */
export interface HostCandidate {
  id: string;
  tenant_id: string;
  hostname: string;
  tags: string;
  session_id: string | null;
  last_picked_at: number | string | null;
  cloud_instance_id?: string | null;
}

/** The engine's facts of host rows, by tenant. */
export function hostsByTenant(rows: HostCandidate[]): Map<string, HostFacts[]> {
  const byTenant = new Map<string, HostFacts[]>();
  for (const row of rows) {
    const host: HostFacts = {
      id: row.id, hostname: row.hostname, tags: JSON.parse(row.tags) as string[], online: row.session_id !== null, lastPickedAt: row.last_picked_at === null ? null : Number(row.last_picked_at), cloudInstanceId: row.cloud_instance_id ?? null,
    };
    // Pushed, not copied: a tenant's fleet of 10,000 hosts was 50 million copies.
    const hosts = byTenant.get(row.tenant_id);
    if (hosts) hosts.push(host);
    else byTenant.set(row.tenant_id, [host]);
  }
  return byTenant;
}

/** The latest time a one-host target picked any of these hosts (-Infinity: never). */
export function latestPick(hosts: readonly HostFacts[]): number {
  let latest = -Infinity;
  for (const host of hosts) latest = Math.max(latest, host.lastPickedAt ?? -Infinity);
  return latest;
}
