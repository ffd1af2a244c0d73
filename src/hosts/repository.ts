import { randomBytes } from 'node:crypto';
import type { CompiledQuery, Kysely, Transaction } from 'kysely';
import { hostKey, shortName } from '../engine/decide.js';
import { notFound, PitcrewError } from '../errors/catalogue.js';
import { newId } from '../store/ids.js';
import { preparedListQuery } from '../store/prepared.js';
import type { PageRequest } from '../store/pagination.js';
import { chunksWithin } from '../store/statements.js';
import { TurnLoader } from '../store/turn-loader.js';
import type { Database, HostEnrolmentRow, HostRow } from '../store/schema.js';
import { currentKeyScopes } from '../tenants/repository.js';
import { missingScopeMessage, newKeyAdvice } from '../tenants/scopes.js';
import { hashSecret, secretMatches } from '../identity/secrets.js';
import { appendAudit } from '../identity/audit/repository.js';
import { alreadyEnrolled, decideEnrolment } from './enrolment.js';

type Db = Kysely<Database> | Transaction<Database>;

export interface AgentFacts {
  hostname: string;
  tags: string[];
  os: string;
  arch: string;
  version: string;
  /** Reported by the agent: it wins over one set through the API (the machine knows itself). */
  cloudInstanceId?: string | undefined;
}

/** The per-agent credential issued at enrolment; the prefix tells it apart from keys and tokens. */
export function generateAgentToken(): string {
  return `pca_${randomBytes(32).toString('hex')}`;
}

/** Who enrols: the API key (as the cache knew it) and the caller's address, for the host's history. */
export interface Enroller {
  keyId: string;
  keyName: string;
  sourceIp: string;
}

/**
 * Enrols an agent: the host is created, or, when the agent asked to replace it, found by name (any
 * case: hostKey) and given a new credential (the previous one stops working). It keeps the name as
 * the agent reports it now. Tags from the agent's flags join those set in pitcrew. The key is read
 * again here, so a key revoked or narrowed on another node since that node's cache loaded it enrols
 * nothing; each enrolment is recorded in the host's history.
 */
export async function enrolHost(db: Kysely<Database>, tenantId: string, facts: AgentFacts, by: Enroller, options: { replace: boolean }, now = Date.now()): Promise<{ host: HostRow; token: string }> {
  const token = generateAgentToken();
  const host = await db.transaction().execute(async (tx) => {
    await assertEnrolKey(tx, by);
    const existing = await tx.selectFrom('hosts').selectAll().where('tenant_id', '=', tenantId).where('hostname_key', '=', hostKey(facts.hostname)).executeTakeFirst();
    const decision = decideEnrolment(existing, options.replace);
    if (decision.kind === 'refuse') throw alreadyEnrolled(decision.host, decision.online);
    const base = existing ?? {
      id: newId(now),
      tenant_id: tenantId,
      hostname: facts.hostname,
      hostname_key: hostKey(facts.hostname),
      hostname_short: shortName(hostKey(facts.hostname)),
      managed_tags: '[]',
      enrolled_at: now,
      last_seen_at: null,
      session_id: null,
      node_id: null,
      last_picked_at: null,
      cloud_instance_id: null,
    };
    const row: HostRow = {
      ...base,
      hostname: facts.hostname,
      tags: '[]',
      agent_tags: JSON.stringify(normaliseTags(facts.tags)),
      os: facts.os,
      arch: facts.arch,
      agent_version: facts.version,
      token_hash: hashSecret(token),
    };
    row.tags = JSON.stringify(effectiveTags(row));
    if (existing) await tx.updateTable('hosts').set(row).where('id', '=', row.id).execute();
    else await tx.insertInto('hosts').values(row).execute();
    await writeTags(tx, row);
    await tx.insertInto('host_enrolments').values({
      id: newId(now), tenant_id: tenantId, host_id: row.id, kind: decision.kind === 'new' ? 'enrolled' : 'replaced', hostname: facts.hostname,
      api_key_id: by.keyId, api_key_name: by.keyName, source_ip: by.sourceIp, agent_version: facts.version, os: facts.os,
      was_online: decision.kind === 'replace' && decision.wasOnline ? 1 : 0, at: now,
    }).execute();
    // A replaced agent is in the audit log too, in the same transaction: the key that did it, from where.
    if (decision.kind === 'replace') {
      await appendAudit(tx, {
        tenantId, at: now, actor: { type: 'api_key', id: by.keyId, name: by.keyName }, via: 'api_key', ip: by.sourceIp,
        action: 'host.replace', targetType: 'host', targetId: row.id, before: agentOf(decision.host, decision.wasOnline), after: agentOf(row, false),
      });
    }
    return row;
  });
  return { host, token };
}

/** What an audit entry shows of a host's agent: enough to tell the machine that took the name. */
function agentOf(row: HostRow, online: boolean) {
  return { hostname: row.hostname, os: row.os, arch: row.arch, agentVersion: row.agent_version, agentTags: JSON.parse(row.agent_tags) as string[], online };
}

async function assertEnrolKey(tx: Transaction<Database>, by: Enroller): Promise<void> {
  const scopes = await currentKeyScopes(tx, by.keyId);
  if (!scopes) throw new PitcrewError('PITCREW_ERR_INVALID_API_KEY', `the API key was revoked a moment ago; ${newKeyAdvice('enrol', 'start the agent with it: npx pitcrew agent --api-key <key>')}`);
  if (!scopes.includes('enrol')) throw new PitcrewError('PITCREW_ERR_KEY_SCOPE', missingScopeMessage('enrol', by.keyName));
}

/** A host's enrolments, newest first: who took its name, when, from where. */
export async function hostEnrolments(db: Db, tenantId: string, hostId: string, page: PageRequest): Promise<HostEnrolmentRow[]> {
  await getHost(db, tenantId, hostId);
  let query = db.selectFrom('host_enrolments').selectAll().where('host_id', '=', hostId).where('tenant_id', '=', tenantId);
  if (page.after) query = query.where('id', '<', page.after);
  return query.orderBy('id', 'desc').limit(page.limit + 1).execute();
}

const hostsByTokenHash = preparedListQuery((db, hashes) => db.selectFrom('hosts').selectAll().where('token_hash', 'in', hashes));

/**
 * The host an agent's credential belongs to, if any: the credentials presented in one turn of the
 * event loop are looked up in one statement (TurnLoader). After a restart every agent reconnects within
 * seconds, and a statement each was a round through Kysely, the driver and SQLite per agent.
 */
export function agentAuthenticator(db: Kysely<Database>): (token: string) => Promise<HostRow | undefined> {
  const hosts = new TurnLoader<string, HostRow>(async (hashes) => {
    const rows = await hostsByTokenHash(db, hashes);
    return rows.map((row) => [row.token_hash, row]);
  });
  return async (token) => {
    const [row] = await hosts.load(hashSecret(token));
    return row && secretMatches(token, row.token_hash) ? row : undefined;
  };
}

/**
 * The host row once a connecting agent's report is applied (its name too: the same host in another
 * case) and this session (on this node) holds it.
 */
export function attachedRow(row: HostRow, facts: AgentFacts, session: { sessionId: string; nodeId: string }, now: number): HostRow {
  const updated: HostRow = {
    ...row,
    hostname: facts.hostname,
    agent_tags: JSON.stringify(normaliseTags(facts.tags)),
    os: facts.os,
    arch: facts.arch,
    agent_version: facts.version,
    cloud_instance_id: facts.cloudInstanceId ?? row.cloud_instance_id,
    last_seen_at: now,
    session_id: session.sessionId,
    node_id: session.nodeId,
  };
  updated.tags = JSON.stringify(effectiveTags(updated));
  return updated;
}

/** The statements that write a host's effective tags into host_tags (the index targets use). */
export function tagWrites(db: Db, row: HostRow): CompiledQuery[] {
  const tags = JSON.parse(row.tags) as string[];
  const writes = [db.deleteFrom('host_tags').where('host_id', '=', row.id).compile()];
  if (tags.length > 0) writes.push(db.insertInto('host_tags').values(tags.map((tag) => ({ host_id: row.id, tenant_id: row.tenant_id, tag }))).compile());
  return writes;
}

/**
 * Last-seen times of the hosts heard from, in statements of at most 1,000 ids: one statement for
 * all of them failed past SQLite's 32,766 parameters (PostgreSQL's 65,535), so a fleet that large
 * would never have had its times written.
 */
export async function touchHosts(db: Db, hostIds: string[], now = Date.now()): Promise<void> {
  for (const some of chunksWithin(hostIds, 1000)) await db.updateTable('hosts').set({ last_seen_at: now }).where('id', 'in', some).execute();
}

/** What people set on a host: its managed tags, its cloud instance id (null forgets it). */
export async function updateHost(db: Kysely<Database>, tenantId: string, hostId: string, patch: { tags?: string[]; cloudInstanceId?: string | null }): Promise<HostRow> {
  return db.transaction().execute(async (tx) => {
    let updated = await getHost(tx, tenantId, hostId);
    if (patch.cloudInstanceId !== undefined) {
      updated = { ...updated, cloud_instance_id: patch.cloudInstanceId };
      await tx.updateTable('hosts').set({ cloud_instance_id: patch.cloudInstanceId }).where('id', '=', hostId).execute();
    }
    if (patch.tags !== undefined) {
      updated = { ...updated, managed_tags: JSON.stringify(normaliseTags(patch.tags)) };
      updated.tags = JSON.stringify(effectiveTags(updated));
      await tx.updateTable('hosts').set({ managed_tags: updated.managed_tags, tags: updated.tags }).where('id', '=', hostId).execute();
      await writeTags(tx, updated);
    }
    return updated;
  });
}

export async function getHost(db: Db, tenantId: string, id: string): Promise<HostRow> {
  const row = await db.selectFrom('hosts').selectAll().where('id', '=', id).where('tenant_id', '=', tenantId).executeTakeFirst();
  if (!row || isDeleted(row)) throw notFound('host', id);
  return row;
}

export interface HostFilter {
  /** Hosts carrying every one of these tags (the hosts a specific_tags target resolves to). */
  tags?: string[];
  hostname?: string;
}

export async function listHosts(db: Db, tenantId: string, filter: HostFilter, page: PageRequest): Promise<HostRow[]> {
  let query = filtered(db, tenantId, filter).selectAll();
  if (page.after) query = query.where('id', '>', page.after);
  return query.orderBy('id').limit(page.limit + 1).execute();
}

/** How many hosts match, and how many of them have their agent connected now. */
export async function countHosts(db: Db, tenantId: string, filter: HostFilter): Promise<{ count: number; online: number }> {
  const row = await filtered(db, tenantId, filter)
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.count<number>('session_id').as('online')])
    .executeTakeFirstOrThrow();
  return { count: Number(row.count), online: Number(row.online) };
}

/** Every tag in use in the tenant, with how many hosts carry it. */
export async function tagCounts(db: Db, tenantId: string): Promise<Array<{ tag: string; hosts: number }>> {
  const rows = await db
    .selectFrom('host_tags')
    .select((eb) => ['tag', eb.fn.countAll<number>().as('hosts')])
    .where('tenant_id', '=', tenantId)
    .groupBy('tag')
    .orderBy('tag')
    .execute();
  return rows.map((row) => ({ tag: row.tag, hosts: Number(row.hosts) }));
}

function filtered(db: Db, tenantId: string, filter: HostFilter) {
  let query = db.selectFrom('hosts').where('tenant_id', '=', tenantId).where('hostname_key', 'not like', 'deleted:%');
  if (filter.hostname) query = query.where('hostname_key', '=', hostKey(filter.hostname));
  const tags = [...new Set(filter.tags ?? [])];
  if (tags.length > 0) {
    const carryingAll = db
      .selectFrom('host_tags')
      .select('host_id')
      .where('tenant_id', '=', tenantId)
      .where('tag', 'in', tags)
      .groupBy('host_id')
      .having((eb) => eb.fn.countAll(), '=', tags.length);
    query = query.where('id', 'in', carryingAll);
  }
  return query;
}

/** Forgets a host: its agent's credential stops working; its executions stay on record. */
export async function deleteHost(db: Kysely<Database>, tenantId: string, id: string): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await getHost(tx, tenantId, id);
    await tx.deleteFrom('host_tags').where('host_id', '=', id).execute();
    // The row stays for the executions that reference it; a fresh random hash revokes the credential.
    await tx
      .updateTable('hosts')
      .set({ token_hash: hashSecret(generateAgentToken()), hostname_key: `deleted:${id}`, hostname_short: `deleted:${id}`, session_id: null, node_id: null, tags: '[]', agent_tags: '[]', managed_tags: '[]' })
      .where('id', '=', id)
      .execute();
  });
}

export function isDeleted(row: HostRow): boolean {
  return row.hostname_key.startsWith('deleted:');
}

function effectiveTags(row: Pick<HostRow, 'agent_tags' | 'managed_tags'>): string[] {
  return normaliseTags([...(JSON.parse(row.agent_tags) as string[]), ...(JSON.parse(row.managed_tags) as string[])]);
}

function normaliseTags(tags: string[]): string[] {
  return [...new Set(tags.map((tag) => tag.trim()).filter(Boolean))].sort();
}

async function writeTags(tx: Transaction<Database>, row: HostRow): Promise<void> {
  for (const query of tagWrites(tx, row)) await tx.executeQuery(query);
}
