// A/B of CPU per reply for ingest: two pitcrew builds (roots) started side by side, the same
// webhook load on each in alternating rounds; prints server CPU µs per 2xx reply per round.
//   node bench/ab-ingest.js <rootA> <rootB> [rounds=6] [requests=40000]
// AB_NODE_FLAGS adds flags to both servers' node (e.g. --heap-prof --heap-prof-dir=/tmp/x); AB_NODE_FLAGS_A or _B to one.
import path from 'node:path';
import { startPitcrew } from './pitcrew.js';
import { runLoad } from './load.js';
import { cleanupAll, cpuSeconds } from './procs.js';

const [rootA, rootB, rounds = '6', amount = '40000'] = process.argv.slice(2);
const BODY = '{"HostName":"web-1","AlarmName":"disk_full","Severity":"critical","Act":true,"MetaData":{"Key1":"Value1"}}';
const env = { ...process.env, PITCREW_LOG_LEVEL: 'warn' };
const targets = [];
try {
  for (const [name, root] of [['A', rootA], ['B', rootB]]) {
    const p = await startPitcrew({ root: path.resolve(root), env, tempPrefix: `pitcrew-ab-${name}-`, ruleName: 'ab', nodeFlags: (process.env[`AB_NODE_FLAGS_${name}`] ?? process.env.AB_NODE_FLAGS ?? '').split(' ').filter(Boolean) });
    targets.push({ name, url: `${p.base}${p.webhookPath}`, pid: p.server.pid, child: p.server });
    await runLoad({ url: targets.at(-1).url, body: BODY, connections: 100, amount: 10000, stopWhen: p.server.exited, watchdogMs: 120_000 });
  }
  const per = { A: [], B: [] };
  for (let r = 0; r < Number(rounds); r++) {
    for (const t of r % 2 ? [...targets].reverse() : targets) {
      const c0 = cpuSeconds(t.pid);
      const res = await runLoad({ url: t.url, body: BODY, connections: 100, amount: Number(amount), stopWhen: t.child.exited, watchdogMs: 120_000 });
      const us = ((cpuSeconds(t.pid) - c0) / Math.max(res.ok, 1)) * 1e6;
      per[t.name].push(us);
      console.log(`round ${r + 1} ${t.name}: ${us.toFixed(1)} µs/reply, ${res.ok} ok, ${res.non2xx ?? 0} non-2xx`);
    }
  }
  const med = (a) => [...a].sort((x, y) => x - y)[Math.floor(a.length / 2)];
  const min = (a) => Math.min(...a);
  console.log(`A median ${med(per.A).toFixed(1)} least ${min(per.A).toFixed(1)} | B median ${med(per.B).toFixed(1)} least ${min(per.B).toFixed(1)} | B/A median ${(med(per.B) / med(per.A)).toFixed(3)} least ${(min(per.B) / min(per.A)).toFixed(3)}`);
} finally {
  await cleanupAll();
}
