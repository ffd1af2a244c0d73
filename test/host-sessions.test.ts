import { afterAll, beforeAll, describe, expect, it, onTestFinished, vi } from 'vitest';
import { touchHosts } from '../src/hosts/repository.js';
import { HostSessions } from '../src/hosts/sessions.js';
import { Statements } from '../src/store/statements.js';
import { startTestEnv, type TestEnv } from './support/app.js';
import { testDialects } from './support/databases.js';

// Which session holds each host, as agents' hellos and disconnections record it (no agent
// processes: the hosts are enrolled, and the test attaches and detaches them as sessions would).
describe.each(testDialects())('host sessions on %s', (dialect) => {
  let env: TestEnv;

  beforeAll(async () => {
    env = await startTestEnv(dialect);
  });
  afterAll(() => env.close());

  /** The store's own durability, counting its syncs: one per transaction. */
  function counted(): { sessions: HostSessions; commits: () => number } {
    const { durability, db } = env.store;
    let commits = 0;
    const sessions = new HostSessions(db, { ...durability, flush: () => ((commits += 1), durability.flush()) }, dialect);
    return { sessions, commits: () => commits };
  }
  const facts = (hostname: string, tags: string[]) => ({ hostname, tags, os: 'Linux 6.1', arch: 'x64', version: '1.2.3' });
  const host = (id: string) => env.store.db.selectFrom('hosts').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
  const tags = async (id: string) => (await env.store.db.selectFrom('host_tags').select('tag').where('host_id', '=', id).orderBy('tag').execute()).map((r) => r.tag);

  it('records what the agent reports and the session holding the host; a detach of an older session leaves it', async () => {
    const { sessions } = counted();
    const { hostId } = await env.enrol('attach-1', ['web']);
    await env.store.db.updateTable('hosts').set({ managed_tags: '["pinned"]' }).where('id', '=', hostId).execute();
    await sessions.attach(hostId, facts('attach-1', ['eu', 'web']), { sessionId: 's-1', nodeId: 'n-1' });
    expect(await host(hostId)).toMatchObject({ session_id: 's-1', node_id: 'n-1', os: 'Linux 6.1', agent_version: '1.2.3', agent_tags: '["eu","web"]', tags: '["eu","pinned","web"]' });
    expect(await tags(hostId)).toEqual(['eu', 'pinned', 'web']);
    await sessions.attach(hostId, facts('attach-1', ['web']), { sessionId: 's-2', nodeId: 'n-1' });
    await sessions.detach(hostId, 's-1');
    expect(await host(hostId)).toMatchObject({ session_id: 's-2', tags: '["pinned","web"]' });
    expect(await tags(hostId)).toEqual(['pinned', 'web']);
    await sessions.detach(hostId, 's-2');
    expect(await host(hostId)).toMatchObject({ session_id: null, node_id: null });
  });

  it('takes the last of two hellos of one host in the same batch, tags included', async () => {
    const { sessions } = counted();
    const { hostId } = await env.enrol('twice-1', ['web']);
    await Promise.all([
      sessions.attach(hostId, facts('twice-1', ['a']), { sessionId: 'old', nodeId: 'n-1' }),
      sessions.detach(hostId, 'old'),
      sessions.attach(hostId, facts('twice-1', ['b']), { sessionId: 'new', nodeId: 'n-1' }),
    ]);
    expect(await host(hostId)).toMatchObject({ session_id: 'new', agent_tags: '["b"]' });
    expect(await tags(hostId)).toEqual(['b']);
  });

  it('sets only the columns a hello changed: a known host reconnecting rewrites none of its indexed columns', async () => {
    const updated: string[][] = [];
    // Records the columns of each UPDATE of a host as its statement is made, before any SQL runs.
    const original = Statements.prototype.updateById;
    const spy = vi.spyOn(Statements.prototype, 'updateById').mockImplementation(function (this: Statements, ...args: Parameters<Statements['updateById']>) {
      // last_seen_at is left out: it is set only when the clock moved since the last hello (two may share a millisecond).
      if (args[0] === 'hosts') updated.push(Object.keys(args[1]).filter((c) => c !== 'last_seen_at').sort());
      return original.apply(this, args);
    });
    onTestFinished(() => spy.mockRestore());
    const sessions = new HostSessions(env.store.db, env.store.durability, dialect);
    const { hostId } = await env.enrol('narrow-1', ['web']);
    await sessions.attach(hostId, facts('narrow-1', ['web']), { sessionId: 's-1', nodeId: 'n-1' });
    updated.length = 0;
    await sessions.attach(hostId, facts('narrow-1', ['web']), { sessionId: 's-2', nodeId: 'n-2' });
    expect(updated).toEqual([['node_id', 'session_id']]);
    expect(await host(hostId)).toMatchObject({ session_id: 's-2', node_id: 'n-2', hostname: 'narrow-1', agent_version: '1.2.3', tags: '["web"]' });
    updated.length = 0;
    await sessions.attach(hostId, { ...facts('NARROW-1', ['web']), version: '1.2.4' }, { sessionId: 's-3', nodeId: 'n-2' });
    expect(updated).toEqual([['agent_version', 'hostname', 'session_id']]);
    expect(await host(hostId)).toMatchObject({ hostname: 'NARROW-1', agent_version: '1.2.4', session_id: 's-3' });
  });

  it('takes a session\'s hello twice in one batch (nothing left to change the second time) without failing the batch', async () => {
    const { sessions } = counted();
    const one = (await env.enrol('again-1')).hostId;
    const other = (await env.enrol('again-2')).hostId;
    await Promise.all([
      sessions.attach(one, facts('again-1', []), { sessionId: 's-again', nodeId: 'n-1' }),
      sessions.attach(one, facts('again-1', []), { sessionId: 's-again', nodeId: 'n-1' }),
      sessions.attach(other, facts('again-2', []), { sessionId: 's-other', nodeId: 'n-1' }),
    ]);
    expect(await host(one)).toMatchObject({ session_id: 's-again' });
    expect(await host(other)).toMatchObject({ session_id: 's-other' });
  });

  it('commits the hellos of a fleet reconnecting at once together, not one transaction each', async () => {
    const { sessions, commits } = counted();
    const hostIds = [];
    for (let i = 0; i < 300; i += 1) hostIds.push((await env.enrol(`fleet-${i}`, ['fleet'])).hostId);
    await Promise.all(hostIds.map((id, i) => sessions.attach(id, facts(`fleet-${i}`, ['fleet']), { sessionId: `s-${i}`, nodeId: 'n-1' })));
    // 300 hellos in one turn of the event loop: batches of at most 256.
    expect(commits()).toBe(2);
    const online = await env.store.db.selectFrom('hosts').select((eb) => eb.fn.countAll<number>().as('n')).where('id', 'in', hostIds).where('node_id', '=', 'n-1').executeTakeFirstOrThrow();
    expect(Number(online.n)).toBe(300);
    await Promise.all(hostIds.map((id, i) => sessions.detach(id, `s-${i}`)));
    expect(commits()).toBe(4);
  });

  it('writes the last-seen times of more hosts than one statement can name (66,000: past both databases\' parameter limits)', async () => {
    const heard = [(await env.enrol('seen-1')).hostId, (await env.enrol('seen-2')).hostId];
    const ids = [...Array.from({ length: 66_000 }, (_, i) => `gone-${i}`), ...heard];
    await touchHosts(env.store.db, ids, 1_234_567);
    for (const id of heard) expect((await host(id)).last_seen_at).toBe(1_234_567);
  });
});
