// Operator moves on a throw-away Redis Cluster, done the way redis-cli --cluster does them but
// one command at a time, so tests can interleave traffic: moving a slot between masters, and
// killing a master for its replica to take over.
import type { RedisCluster } from '../redis-cluster.js';
import { parseClusterNodes } from '../redis-cluster-topology.js';
import type { RedisServer } from '../redis-server.js';
import { redisCommand } from '../resp.js';
import { sleep } from './shared.js';

/**
 * The node id of the server on `port`.
 * @example
 * ```ts
 * import { nodeId, type RedisCluster } from '@floodgate/testkit/redis';
 *
 * declare const cluster: RedisCluster;
 * const ids = await Promise.all(cluster.nodes.map((n) => nodeId(n.port)));
 * ```
 * @public
 */
export async function nodeId(port: number): Promise<string> {
  return String(await redisCommand(port, ['CLUSTER', 'MYID']));
}

/**
 * The hash slot of `key`, as the cluster computes it.
 * @example
 * ```ts
 * import { type RedisCluster, slotOf } from '@floodgate/testkit/redis';
 *
 * declare const cluster: RedisCluster;
 * // Every key of one identity shares its hash tag, hence its slot.
 * const slot = await slotOf(cluster.nodes[0]!.port, 'api:{user-1}:fw');
 * ```
 * @public
 */
export async function slotOf(port: number, key: string): Promise<number> {
  return Number(await redisCommand(port, ['CLUSTER', 'KEYSLOT', key]));
}

/**
 * Moves `slot` from the master on `from` to the master on `to` while clients keep using it:
 * `SETSLOT … IMPORTING` on the target, `SETSLOT … MIGRATING` on the source, then `MIGRATE` of
 * the slot's keys in batches (clients asking for a key already moved get `ASK`), and finally
 * `SETSLOT … NODE` on both and on every other master (clients then get `MOVED`). `holdMs` is
 * waited before and after each `MIGRATE`, so traffic meets the slot in each state. Resolves
 * with the number of keys moved.
 * @example
 * ```ts
 * import { migrateSlot, type RedisCluster, slotOf } from '@floodgate/testkit/redis';
 *
 * declare const cluster: RedisCluster; // traffic keeps running against it meanwhile
 * const key = 'api:{user-1}:fw';
 * const from = await cluster.masterOf(key);
 * const masters = [...(await cluster.waitSettled()).replicasOf.keys()];
 * const to = cluster.nodes.find((n) => n.port !== from.port && masters.includes(n.port))!;
 * const moved = await migrateSlot(cluster, await slotOf(from.port, key), from, to, { holdMs: 100 });
 * ```
 * @public
 */
export async function migrateSlot(
  cluster: RedisCluster,
  slot: number,
  from: RedisServer,
  to: RedisServer,
  options: { batch?: number; holdMs?: number } = {},
): Promise<number> {
  const [fromId, toId] = [await nodeId(from.port), await nodeId(to.port)];
  await redisCommand(to.port, ['CLUSTER', 'SETSLOT', slot, 'IMPORTING', fromId]);
  await redisCommand(from.port, ['CLUSTER', 'SETSLOT', slot, 'MIGRATING', toId]);
  const hold = () => sleep(options.holdMs ?? 0);
  let moved = 0;
  for (;;) {
    const keys = (await redisCommand(from.port, [
      'CLUSTER',
      'GETKEYSINSLOT',
      slot,
      options.batch ?? 1000,
    ])) as string[];
    if (keys.length === 0) break;
    await hold();
    // All of an identity's keys move in one MIGRATE (a batch holds every key in the slot unless
    // it is huge): a script never finds half of its keys gone (which would be TRYAGAIN).
    await redisCommand(from.port, ['MIGRATE', to.host, to.port, '', 0, 5000, 'KEYS', ...keys]);
    moved += keys.length;
    await hold();
  }
  await redisCommand(to.port, ['CLUSTER', 'SETSLOT', slot, 'NODE', toId]);
  await redisCommand(from.port, ['CLUSTER', 'SETSLOT', slot, 'NODE', toId]);
  const views = parseClusterNodes(String(await redisCommand(from.port, ['CLUSTER', 'NODES'])));
  for (const v of views) {
    const running = cluster.nodes.some((n) => n.port === v.port);
    if (v.role === 'master' && running && v.port !== to.port && v.port !== from.port) {
      // Gossip would tell them too; saying it at once shortens the MOVED window.
      await redisCommand(v.port, ['CLUSTER', 'SETSLOT', slot, 'NODE', toId]).catch(() => {});
    }
  }
  return moved;
}

/**
 * SIGKILLs the master serving `key` (no goodbye: writes it acknowledged but had not yet sent to
 * its replica are lost) and resolves once another node serves the key, with that node.
 * `replicaLagMs`: first cut the master's replica off for that long (the replica is stopped and
 * its link killed, as a slow or partitioned replica would be), so the writes of that span exist
 * on the master only when it dies.
 * @example
 * ```ts
 * import { killMasterOf, type RedisCluster, rejoin } from '@floodgate/testkit/redis';
 *
 * declare const cluster: RedisCluster;
 * // The replica is cut off 300 ms before its master dies: the writes of that span are lost.
 * const { victim, successor, failoverMs } = await killMasterOf(cluster, 'api:{user-1}:fw', { replicaLagMs: 300 });
 * await rejoin(cluster, victim); // back as a replica of `successor`
 * ```
 * @public
 */
export async function killMasterOf(
  cluster: RedisCluster,
  key: string,
  options: { replicaLagMs?: number; timeoutMs?: number } = {},
): Promise<{ victim: RedisServer; successor: RedisServer; failoverMs: number }> {
  const victim = await cluster.masterOf(key);
  const lag = options.replicaLagMs ?? 0;
  let replica: RedisServer | undefined;
  if (lag > 0) {
    const port = (await cluster.waitSettled()).replicasOf.get(victim.port)?.[0];
    replica = cluster.nodes.find((n) => n.port === port);
    if (replica === undefined) throw new Error(`master ${victim.port} has no replica`);
    process.kill(replica.pid, 'SIGSTOP');
  }
  const started = performance.now();
  try {
    if (replica !== undefined) {
      await redisCommand(victim.port, ['CLIENT', 'KILL', 'TYPE', 'replica']);
      await sleep(lag);
    }
    process.kill(victim.pid, 'SIGKILL');
  } finally {
    if (replica !== undefined) process.kill(replica.pid, 'SIGCONT');
  }
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  for (;;) {
    const successor = await cluster.masterOf(key).catch(() => victim);
    if (successor !== victim) return { victim, successor, failoverMs: performance.now() - started };
    if (Date.now() > deadline) throw new Error(`no replica took over ${key} in time`);
    await sleep(50);
  }
}

/**
 * Restarts a killed node: it rejoins as a replica of its successor; resolves once settled.
 * @example
 * ```ts
 * import { killMasterOf, type RedisCluster, rejoin } from '@floodgate/testkit/redis';
 *
 * declare const cluster: RedisCluster;
 * const { victim } = await killMasterOf(cluster, 'api:{user-1}:fw');
 * await rejoin(cluster, victim);
 * const { replicasOf } = await cluster.waitSettled(); // full strength again
 * ```
 * @public
 */
export async function rejoin(cluster: RedisCluster, node: RedisServer): Promise<void> {
  await node.restart();
  await cluster.waitSettled();
}
