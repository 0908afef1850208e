// What a Redis Cluster looks like from each of its nodes, and whether they all agree. A cluster
// that says `cluster_state:ok` can still be mid-gossip: a replica that was told to replicate is
// a master in its neighbours' eyes for a while, and a test that counts roles then sees 6 masters.
import { redisCommand } from './resp.js';

/**
 * One line of `CLUSTER NODES`, as one node sees another.
 * @example
 * ```ts
 * import { type ClusterNodeView, parseClusterNodes, redisCommand } from '@floodgate/testkit/redis';
 *
 * declare const port: number; // a node of a cluster from startRedisCluster
 * const views: ClusterNodeView[] = parseClusterNodes(String(await redisCommand(port, ['CLUSTER', 'NODES'])));
 * const serving = views.filter((v) => v.role === 'master' && v.slots.length > 0);
 * const failing = views.filter((v) => v.trouble.includes('fail'));
 * ```
 * @public
 */
export interface ClusterNodeView {
  readonly id: string;
  readonly port: number;
  /** `master` or `replica`. */
  readonly role: 'master' | 'replica';
  /** The master's node id, for a replica. */
  readonly masterId: string | undefined;
  /** Flags other than the role and `myself` (`fail?`, `fail`, `handshake`, `noaddr`, …). */
  readonly trouble: readonly string[];
  /** Slot ranges this node serves, as listed (`0-5460`); importing/migrating entries kept. */
  readonly slots: readonly string[];
  readonly connected: boolean;
  readonly myself: boolean;
}

/**
 * Parses the reply of `CLUSTER NODES`: one view per line.
 * @example
 * ```ts
 * import { parseClusterNodes } from '@floodgate/testkit/redis';
 *
 * const text = 'e7d1eec 127.0.0.1:30001@40001 myself,master - 0 0 1 connected 0-5460\n';
 * const [node] = parseClusterNodes(text);
 * // node: { port: 30001, role: 'master', myself: true, slots: ['0-5460'], ... }
 * ```
 * @public
 */
export function parseClusterNodes(text: string): ClusterNodeView[] {
  const out: ClusterNodeView[] = [];
  for (const line of text.split('\n')) {
    const f = line.trim().split(' ');
    if (f.length < 8) continue;
    const flags = f[2]!.split(',');
    const role = flags.includes('slave') ? 'replica' : 'master';
    out.push({
      id: f[0]!,
      port: Number(f[1]!.split(/[:@,]/)[1]),
      role,
      masterId: f[3] === '-' ? undefined : f[3],
      trouble: flags.filter((x) => !['master', 'slave', 'myself', 'nofailover'].includes(x)),
      slots: f.slice(8),
      connected: f[7] === 'connected',
      myself: flags.includes('myself'),
    });
  }
  return out;
}

/**
 * What every node agreed on: one entry per running node.
 * @example
 * ```ts
 * import { type ClusterTopology, startRedisCluster } from '@floodgate/testkit/redis';
 *
 * const cluster = await startRedisCluster();
 * const topology: ClusterTopology = await cluster.waitSettled();
 * for (const [master, replicas] of topology.replicasOf) console.log(master, '->', replicas);
 * await cluster.stop();
 * ```
 * @public
 */
export interface ClusterTopology {
  readonly nodes: readonly ClusterNodeView[];
  /** A running master's port → the ports of its running replicas. */
  readonly replicasOf: ReadonlyMap<number, readonly number[]>;
}

async function views(port: number): Promise<ClusterNodeView[]> {
  return parseClusterNodes(String(await redisCommand(port, ['CLUSTER', 'NODES'])));
}

/**
 * The topology every running node (`ports`) agrees on, or the reason it is not settled yet:
 * every node reports `cluster_state:ok` with all slots served; every node lists the same roles,
 * masters and slot ranges for the running nodes, with no failure or handshake flag; no slot is
 * left on a node that is not running, none is mid-migration; every running replica has its
 * replication link up to the master the cluster says it has, and every master counts it as an
 * online replica.
 * @example
 * ```ts
 * import { type RedisCluster, settledTopology } from '@floodgate/testkit/redis';
 *
 * declare const cluster: RedisCluster;
 * const topology = await settledTopology(cluster.nodes.map((n) => n.port));
 * if ('reason' in topology) console.log('not settled yet:', topology.reason);
 * else console.log(topology.replicasOf.size, 'masters');
 * ```
 * @public
 */
export async function settledTopology(
  ports: readonly number[],
): Promise<ClusterTopology | { reason: string }> {
  const running = new Set(ports);
  let agreed: string | undefined;
  let mine: ClusterNodeView[] = [];
  for (const port of ports) {
    const info = String(await redisCommand(port, ['CLUSTER', 'INFO']));
    if (!info.includes('cluster_state:ok') || !info.includes('cluster_slots_ok:16384')) {
      return { reason: `node ${port} does not serve every slot yet` };
    }
    const seen = await views(port);
    for (const v of seen) {
      if (running.has(v.port)) {
        if (v.trouble.length > 0) return { reason: `${port} sees ${v.port} as ${v.trouble}` };
        if (!v.myself && !v.connected) return { reason: `${port} has no link to ${v.port}` };
      } else if (v.role === 'master' && v.slots.length > 0) {
        return { reason: `${port} sees slots on ${v.port}, which is not running` };
      }
      if (v.slots.some((s) => s.startsWith('['))) return { reason: `a slot is migrating` };
    }
    const byId = new Map(seen.map((v) => [v.id, v.port]));
    const canonical = seen
      .filter((v) => running.has(v.port))
      .map((v) => `${v.port} ${v.role} ${byId.get(v.masterId ?? '') ?? '-'} ${v.slots.join(',')}`)
      .sort()
      .join('\n');
    if (agreed === undefined) {
      agreed = canonical;
      mine = seen.filter((v) => running.has(v.port));
    } else if (canonical !== agreed) {
      return { reason: `nodes disagree on the topology:\n${agreed}\nvs (${port}):\n${canonical}` };
    }
  }
  if (mine.length !== running.size) return { reason: 'a running node is not known to the rest' };
  const portOf = new Map(mine.map((v) => [v.id, v.port]));
  const replicasOf = new Map<number, number[]>();
  for (const v of mine) if (v.role === 'master') replicasOf.set(v.port, []);
  for (const v of mine) {
    if (v.role !== 'replica') continue;
    const master = portOf.get(v.masterId ?? '');
    if (master === undefined) return { reason: `replica ${v.port} follows a node that is down` };
    const info = String(await redisCommand(v.port, ['INFO', 'replication']));
    if (!info.includes('role:slave') || !info.includes(`master_port:${master}\r`)) {
      return { reason: `replica ${v.port} does not replicate ${master} yet` };
    }
    if (!info.includes('master_link_status:up')) return { reason: `replica ${v.port} not synced` };
    replicasOf.get(master)?.push(v.port);
  }
  for (const [master, replicas] of replicasOf) {
    const info = String(await redisCommand(master, ['INFO', 'replication']));
    const online = [...info.matchAll(/^slave\d+:.*port=(\d+),state=online/gm)].map((m) =>
      Number(m[1]),
    );
    if (replicas.some((r) => !online.includes(r))) {
      return { reason: `master ${master} does not count all its replicas online yet` };
    }
  }
  return { nodes: mine, replicasOf };
}
