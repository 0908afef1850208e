import { fixedWindow, tokenBucket } from '@floodgate/core';
import type { RedisCluster } from '../redis-cluster.js';
import { commandCalls, keysFor } from '../redis-inspect.js';
import { redisCommand } from '../resp.js';
import { migrateSlot, slotOf } from './cluster-ops.js';
import { type ClusterWorkerSetup, forkClusterWorker } from './cluster-worker.js';
import { sleep, tagOf } from './shared.js';
import type { RedisSuiteApi } from './types.js';

const LIMIT = 20;
const policies = [
  fixedWindow({ limit: LIMIT, window: '1h' }),
  tokenBucket({ limit: LIMIT * 2, interval: '1h' }),
];

/**
 * Registers: slots holding live identities move between masters (IMPORTING/MIGRATING, MIGRATE,
 * SETSLOT NODE) while two worker processes decide for those identities; clients follow ASK and
 * MOVED, no decision fails, and each identity is admitted exactly its limit.
 */
export function registerResharding<C>(
  api: RedisSuiteApi,
  cluster: () => RedisCluster,
  setup: ClusterWorkerSetup<C>,
): void {
  const { it, expect } = api;
  it('slots with live identities move between masters under two processes: ASK/MOVED followed, none fails, counts exact', async () => {
    const c = cluster();
    const prefix = `rs-${tagOf(setup.adapter)}`;
    const identities = Array.from({ length: 60 }, (_, i) => `tenant-${i}`);
    const keyOf = (id: string) => keysFor(prefix, id, policies)[0]!;
    // The slots of 6 identities, each to move to the next master.
    const masters = [...(await c.waitSettled()).replicasOf.keys()].sort();
    const moves: { slot: number; from: number; to: number }[] = [];
    for (const id of identities.slice(0, 12)) {
      const slot = await slotOf(masters[0]!, keyOf(id));
      if (moves.some((m) => m.slot === slot) || moves.length === 6) continue;
      const from = (await c.masterOf(keyOf(id))).port;
      moves.push({ slot, from, to: masters[(masters.indexOf(from) + 1) % masters.length]! });
    }
    const asking = async () => {
      let n = 0;
      for (const port of masters) n += (await commandCalls(port)).asking ?? 0;
      return n;
    };
    const askingBefore = await asking();
    const workers = await Promise.all(
      [true, false].map((autoPipelining) =>
        forkClusterWorker(setup.worker, {
          adapter: setup.adapter.name,
          nodes: c.startupNodes,
          clientOptions: { autoPipelining },
          execArgv: setup.execArgv,
        }),
      ),
    );
    try {
      // 60 rounds, 40 ms apart: about 3 s of traffic, 120 requests per identity, 20 admitted.
      const runs = workers.map((w) =>
        w.run({ prefix, identities, limit: LIMIT, rounds: 60, pauseMs: 40 }),
      );
      const node = (port: number) => c.nodes.find((n) => n.port === port)!;
      // Traffic is flowing once every slot to move holds keys.
      for (const m of moves) {
        while (Number(await redisCommand(m.from, ['CLUSTER', 'COUNTKEYSINSLOT', m.slot])) === 0)
          await sleep(10);
      }
      for (const m of moves) {
        const moved = await migrateSlot(c, m.slot, node(m.from), node(m.to), { holdMs: 120 });
        expect(moved).toBeGreaterThan(0); // the slot held live keys
      }
      const replies = await Promise.all(runs);
      expect(replies.flatMap((r) => r.errors)).toEqual([]);
      const total = identities.map((_, i) => replies[0]!.admitted[i]! + replies[1]!.admitted[i]!);
      expect(total).toEqual(identities.map(() => LIMIT));
      // Both processes took part; the slots really live on their new masters now.
      expect(replies.every((r) => r.admitted.some((n) => n > 0))).toBe(true);
      for (const m of moves) {
        const keys = (await redisCommand(m.from, ['CLUSTER', 'GETKEYSINSLOT', m.slot, 10])) as [];
        expect(keys).toHaveLength(0);
        const there = (await redisCommand(m.to, ['CLUSTER', 'COUNTKEYSINSLOT', m.slot])) as number;
        expect(there).toBeGreaterThan(0);
      }
      await c.waitSettled();
      // Requests met keys already gone from the source: ASK, then ASKING on the target.
      const followed = (await asking()) - askingBefore;
      expect(followed).toBeGreaterThan(0);
      console.log(
        `[resharding] ${setup.adapter.name}: ${moves.length} slots moved under traffic, ` +
          `${followed} ASK redirections followed, ${replies[0]!.errors.length} failed decisions`,
      );
    } finally {
      await Promise.all(workers.map((w) => w.stop()));
    }
  });
}
