import { type ClusterTopology, settledTopology } from './redis-cluster-topology.js';
import { type RedisServer, startRedisServer } from './redis-server.js';
import { redisCommand, redisCommands } from './resp.js';

/**
 * The shape of a throw-away cluster and how quickly it fails over.
 * @example
 * ```ts
 * import { type RedisClusterOptions, startRedisCluster } from '@floodgate/testkit/redis';
 *
 * // Three masters without replicas: a slot's master is its only copy.
 * const options: RedisClusterOptions = { masters: 3, replicasPerMaster: 0 };
 * const cluster = await startRedisCluster(options);
 * ```
 * @public
 */
export interface RedisClusterOptions {
  /** Masters; the 16 384 slots are split evenly among them. @default 3 */
  masters?: number;
  /** Replicas per master. @default 1 */
  replicasPerMaster?: number;
  /** The `redis-server` executable. @default 'redis-server' */
  bin?: string;
  /** `cluster-node-timeout`: how soon a dead master is failed over. @default 1000 */
  nodeTimeoutMs?: number;
  /** How long to wait for the cluster to settle (see `waitSettled`). @default 30_000 */
  startTimeoutMs?: number;
}

/**
 * A throw-away Redis Cluster on free loopback ports, owned by this process.
 * @example
 * ```ts
 * import { type RedisCluster, startRedisCluster } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, expect, it } from 'vitest';
 *
 * let cluster: RedisCluster;
 * beforeAll(async () => { cluster = await startRedisCluster(); }, 60_000);
 * afterAll(() => cluster.stop());
 * it('gives the master of every key one replica', async () => {
 *   const master = await cluster.masterOf('api:{user-1}:fw');
 *   const { replicasOf } = await cluster.waitSettled();
 *   expect(replicasOf.get(master.port)).toHaveLength(1);
 * });
 * ```
 * @public
 */
export interface RedisCluster {
  /** Every node; each can be stopped or restarted on its own. */
  readonly nodes: readonly RedisServer[];
  /** `{ host, port }` of every node, for a cluster client's startup list. */
  readonly startupNodes: readonly { host: string; port: number }[];
  /** The node currently serving `key` as master. */
  masterOf(key: string): Promise<RedisServer>;
  /** Resolves when every slot is served and every running node says `cluster_state:ok`. */
  waitHealthy(timeoutMs?: number): Promise<void>;
  /**
   * Resolves, with the topology, once the cluster has settled: every running node agrees on
   * roles and the slot map (no failure flag, no slot mid-migration, none on a stopped node) and
   * every running replica is attached and in sync. Stronger than `waitHealthy`: use it after a
   * failover or a restart before counting masters and replicas.
   */
  waitSettled(timeoutMs?: number): Promise<ClusterTopology>;
  /** Stops every node. */
  stop(): Promise<void>;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until(
  what: string,
  timeoutMs: number,
  check: () => Promise<boolean>,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      if (await check()) return;
    } catch (error) {
      last = error;
    }
    await sleep(50);
  }
  const why = last instanceof Error ? ` (last: ${last.message})` : '';
  throw new Error(`redis cluster: timed out waiting for ${what}${why}`, { cause: last });
}

/**
 * Starts a Redis Cluster of throw-away `redis-server` processes (3 masters with 1 replica each
 * by default) and waits until it has settled: every slot served, every replica in sync. No
 * `redis-cli` needed.
 * @example
 * ```ts
 * import { startRedisCluster } from '@floodgate/testkit/redis';
 * import { Cluster } from 'ioredis';
 *
 * const cluster = await startRedisCluster(); // 3 masters, 1 replica each
 * const client = new Cluster([...cluster.startupNodes]);
 * await client.set('{user-1}:visits', '1');
 * client.disconnect();
 * await cluster.stop();
 * ```
 * @public
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const timeout = options.startTimeoutMs ?? 30_000;
  const args = [
    '--cluster-enabled',
    'yes',
    '--cluster-config-file',
    'nodes.conf',
    '--cluster-node-timeout',
    String(options.nodeTimeoutMs ?? 1000),
    '--cluster-require-full-coverage',
    'no',
    // Replicas sync at once instead of waiting 5 s for more replicas to batch with.
    '--repl-diskless-sync-delay',
    '0',
  ];
  const nodes: RedisServer[] = [];
  const stopAll = async (): Promise<void> => {
    await Promise.all(nodes.map((n) => n.stop()));
  };
  try {
    const started = await Promise.allSettled(
      Array.from({ length: masters * (1 + replicas) }, () =>
        startRedisServer({ args, ...(options.bin === undefined ? {} : { bin: options.bin }) }),
      ),
    );
    for (const s of started) if (s.status === 'fulfilled') nodes.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const ids = await Promise.all(
      nodes.map(async (n) => String(await redisCommand(n.port, ['CLUSTER', 'MYID']))),
    );
    // Slots, split evenly over the masters.
    for (let m = 0; m < masters; m++) {
      const from = Math.floor((m * 16384) / masters);
      const to = Math.floor(((m + 1) * 16384) / masters);
      const slots = Array.from({ length: to - from }, (_, i) => from + i);
      await redisCommand(nodes[m]!.port, ['CLUSTER', 'ADDSLOTS', ...slots]);
    }
    for (const n of nodes.slice(1))
      await redisCommand(nodes[0]!.port, ['CLUSTER', 'MEET', n.host, n.port]);
    await until('every node to know every other', timeout, async () => {
      for (const n of nodes) {
        const known = String(await redisCommand(n.port, ['CLUSTER', 'NODES']))
          .trim()
          .split('\n');
        if (known.length < nodes.length || known.some((l) => l.includes('handshake'))) return false;
      }
      return true;
    });
    for (let r = 0; r < masters * replicas; r++) {
      const replica = nodes[masters + r]!;
      await redisCommand(replica.port, ['CLUSTER', 'REPLICATE', ids[r % masters]!]);
    }
    const cluster = makeCluster(nodes, stopAll);
    // Returned only once every node sees the final layout: `masters` masters serving the slots,
    // each with its replicas attached and in sync (so a failover loses nothing written before it).
    await until('the cluster to settle', timeout, async () => {
      const t = await settledTopology(nodes.map((n) => n.port));
      if ('reason' in t) throw new Error(t.reason);
      const shape = [...t.replicasOf.values()];
      return shape.length === masters && shape.every((r) => r.length === replicas);
    });
    return cluster;
  } catch (error) {
    await stopAll();
    throw error;
  }
}

function makeCluster(nodes: RedisServer[], stopAll: () => Promise<void>): RedisCluster {
  const running = async (): Promise<RedisServer[]> => {
    const up: RedisServer[] = [];
    for (const n of nodes) {
      try {
        await redisCommand(n.port, ['PING'], { timeoutMs: 500 });
        up.push(n);
      } catch {
        // stopped or down
      }
    }
    return up;
  };
  return {
    nodes,
    startupNodes: nodes.map((n) => ({ host: n.host, port: n.port })),
    async masterOf(key) {
      for (const n of await running()) {
        const slot = Number(await redisCommand(n.port, ['CLUSTER', 'KEYSLOT', key]));
        const [shards] = await redisCommands(n.port, [['CLUSTER', 'SLOTS']]);
        if (!Array.isArray(shards)) continue;
        for (const s of shards) {
          if (!Array.isArray(s) || Number(s[0]) > slot || Number(s[1]) < slot) continue;
          const port = Number((s[2] as unknown[])[1]);
          const node = nodes.find((x) => x.port === port);
          if (node !== undefined) return node;
        }
      }
      throw new Error(`no master serves ${JSON.stringify(key)}`);
    },
    async waitHealthy(timeoutMs = 30_000) {
      await until('cluster_state:ok', timeoutMs, async () => {
        const up = await running();
        for (const n of up) {
          const info = String(await redisCommand(n.port, ['CLUSTER', 'INFO']));
          if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384'))
            return false;
        }
        return up.length > 0;
      });
    },
    async waitSettled(timeoutMs = 30_000) {
      let topology: ClusterTopology | undefined;
      await until('the cluster to settle', timeoutMs, async () => {
        const t = await settledTopology((await running()).map((n) => n.port));
        if ('reason' in t) throw new Error(t.reason);
        topology = t;
        return true;
      });
      return topology!;
    },
    stop: stopAll,
  };
}
