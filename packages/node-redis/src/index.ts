import { FloodgateError } from '@floodgate/core';
import { RedisStore, type RedisStoreOptions, type RedisTransport } from '@floodgate/core/redis';
import type { Store } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import { nodeRedisSubscribe } from './subscribe.js';

/**
 * Options of `NodeRedisStore`; see `RedisStoreOptions` in `@floodgate/core/redis` for each default.
 * @example
 * Strict mode: an admission counts once one replica holds it (see `RedisStoreOptions.replicas`).
 * ```ts
 * import { NodeRedisStore, type NodeRedisStoreOptions } from '@floodgate/node-redis';
 * import { createClient } from 'redis';
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const options: NodeRedisStoreOptions = { replicas: { count: 1, timeoutMs: 50 } };
 * const store = new NodeRedisStore(client, options);
 * ```
 * @public
 */
export type NodeRedisStoreOptions = RedisStoreOptions;

type Args = string[];

/**
 * A single node-redis connection: `createClient()` of `redis` / `@redis/client` 4 and later
 * (also a v5+ client pool), or `@node-redis/client` 1.x. Only `sendCommand` is used.
 * @example
 * A function that takes any single node-redis connection, whatever its version.
 * ```ts
 * import type { NodeRedisClientLike } from '@floodgate/node-redis';
 * import { createClient } from 'redis';
 *
 * async function ping(client: NodeRedisClientLike): Promise<unknown> {
 *   return client.sendCommand(['PING']);
 * }
 * await ping(await createClient().connect());
 * ```
 * @public
 */
export interface NodeRedisClientLike {
  sendCommand(args: Args): Promise<unknown>;
  readonly isReady?: boolean;
  readonly isOpen?: boolean;
}

/**
 * A node-redis `createCluster()`: commands are routed to the master owning the first key.
 * @example
 * A node-redis cluster passed to the store.
 * ```ts
 * import type { NodeRedisClusterLike } from '@floodgate/node-redis';
 * import { NodeRedisStore } from '@floodgate/node-redis';
 * import { createCluster } from 'redis';
 *
 * const cluster: NodeRedisClusterLike = await createCluster({
 *   rootNodes: [{ url: 'redis://10.0.0.1:6379' }],
 * }).connect();
 * const store = new NodeRedisStore(cluster);
 * ```
 * @public
 */
export interface NodeRedisClusterLike {
  sendCommand(
    firstKey: string | undefined,
    isReadonly: boolean | undefined,
    args: Args,
  ): Promise<unknown>;
  getSlotMaster(slot: number): unknown;
  readonly isReady?: boolean;
  readonly isOpen?: boolean;
}

/**
 * What `NodeRedisStore` accepts: a single node-redis connection or a cluster.
 * @example
 * ```ts
 * import { type NodeRedisClient, NodeRedisStore } from '@floodgate/node-redis';
 * import { createClient, createCluster } from 'redis';
 *
 * const client: NodeRedisClient = process.env.REDIS_CLUSTER
 *   ? await createCluster({ rootNodes: [{ url: process.env.REDIS_CLUSTER }] }).connect()
 *   : await createClient({ url: process.env.REDIS_URL }).connect();
 * const store = new NodeRedisStore(client);
 * ```
 * @public
 */
export type NodeRedisClient = NodeRedisClientLike | NodeRedisClusterLike;

/** A cluster's `multi(routing)`, as far as strict mode uses it (every generation has it). */
interface ClusterWithMulti {
  multi(routing?: string): {
    addCommand(...args: unknown[]): unknown;
    execAsPipeline(): Promise<unknown[]>;
  };
}

/**
 * The node-redis store: every decision is one `EVALSHA` of Floodgate's limit script, so all
 * processes sharing the Redis server (or Cluster) share exact limits. On `NOSCRIPT` (script cache
 * flushed, restart, failover) it re-sends the script with `EVAL` and the same arguments. It never
 * connects, disconnects or configures the client it is given. Once a limiter with a blocked-key
 * cache uses it, it opens one connection of its own, a `duplicate()` (of one master's client on
 * a cluster) subscribed to the change feed (the `changes` option): its socket never keeps the
 * process alive, and it closes with the client.
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { NodeRedisStore } from '@floodgate/node-redis';
 * import { createClient } from 'redis';
 *
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const limiter = createLimiter({
 *   store: new NodeRedisStore(client),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 * ```
 * @public
 */
export class NodeRedisStore extends RedisStore {
  /** For metrics and traces (`Store.kind`). */
  override readonly kind: string = 'node-redis';

  constructor(client: NodeRedisClient, options: NodeRedisStoreOptions = {}) {
    super(nodeRedisTransport(client), options);
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.clockNow });
  }
}

/** How the store reaches Redis through a node-redis client or cluster. */
function nodeRedisTransport(client: NodeRedisClient): RedisTransport {
  if (
    typeof client !== 'object' ||
    client === null ||
    typeof (client as Partial<NodeRedisClientLike>).sendCommand !== 'function'
  ) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'NodeRedisStore needs a node-redis client or cluster (createClient() / createCluster())',
    );
  }
  const cluster = typeof (client as Partial<NodeRedisClusterLike>).getSlotMaster === 'function';
  let send: (firstKey: string, args: Args) => Promise<unknown>;
  if (cluster) {
    const c = client as NodeRedisClusterLike;
    // The first key routes the command to the master owning its slot (node-redis 1.x cannot
    // find the key of EVALSHA by itself).
    send = (firstKey, args) => c.sendCommand(firstKey, false, args);
  } else {
    // node-redis 4 in legacyMode keeps the promise API under `.v4`.
    const legacy = client as { v4?: NodeRedisClientLike; options?: { legacyMode?: boolean } };
    const single =
      legacy.options?.legacyMode === true && legacy.v4 !== undefined
        ? legacy.v4
        : (client as NodeRedisClientLike);
    send = (_firstKey, args) => single.sendCommand(args);
  }
  return {
    label: 'node-redis',
    // A single-node client (or pool) batches; a cluster does not (one slot per script).
    canBatch: !cluster,
    send: (firstKey, name, args) => send(firstKey, [name, ...args]),
    sendWithWait: (firstKey, name, args, count, timeoutMs) =>
      sendWithWait(client, cluster, send, firstKey, [name, ...args], count, timeoutMs),
    isReady: () => (typeof client.isReady === 'boolean' ? client.isReady : client.isOpen !== false),
    // A client pool cannot be duplicated: no feed (the caches keep to their staleness bound).
    ...(cluster || typeof (client as { duplicate?: unknown }).duplicate === 'function'
      ? { subscribe: nodeRedisSubscribe(client, cluster) }
      : {}),
    // node-redis keeps `isOpen` true while it reconnects: false means closed (or not yet opened).
    isClosed: () => client.isOpen === false,
  };
}

/** Strict mode: the script and its WAIT, one round trip on the connection that runs the script. */
async function sendWithWait(
  client: NodeRedisClient,
  cluster: boolean,
  send: (firstKey: string, args: Args) => Promise<unknown>,
  firstKey: string,
  command: Args,
  count: number,
  timeoutMs: number,
): Promise<[unknown, number]> {
  const wait = ['WAIT', String(count), String(timeoutMs)];
  const multi = (client as Partial<ClusterWithMulti>).multi;
  if (cluster && typeof multi === 'function') {
    // A cluster pipeline routed by the first key: the pair always travels together, so WAIT
    // runs on the connection that ran the script.
    for (let attempt = 0; ; attempt++) {
      const pipeline = multi.call(client, firstKey);
      // redis 5+ takes (firstKey, isReadonly, args); redis 4 and @node-redis/client 1 (firstKey, args).
      const add = (a: string[]) =>
        pipeline.addCommand.length >= 4
          ? pipeline.addCommand(firstKey, false, a)
          : pipeline.addCommand(firstKey, a);
      add(command);
      add(wait);
      try {
        const [reply, waited] = await pipeline.execAsPipeline();
        if (waited instanceof Error) throw waited;
        return [reply, Number(waited)];
      } catch (error) {
        // Not every generation follows MOVED for a pipeline (redis 6 does not): a plain
        // command on the key does, and refreshes the slot map; then the pair is sent again.
        // An ASK (slot mid-migration) is not followed: the decision fails, closed.
        if (attempt < 3 && error instanceof Error && error.message.startsWith('MOVED ')) {
          await send(firstKey, ['EXISTS', firstKey]).catch(() => {});
          continue;
        }
        // The first error reply (NOSCRIPT for the script, or WAIT's): an error either way.
        return [error, 0];
      }
    }
  }
  // One connection: sent in the same tick, node-redis writes both together (one round trip),
  // and WAIT counts the replicas holding that connection's writes.
  const [script, waited] = await Promise.allSettled([
    send(firstKey, command),
    send(firstKey, wait),
  ]);
  if (waited.status === 'rejected') throw waited.reason;
  return [script.status === 'fulfilled' ? script.value : script.reason, Number(waited.value)];
}
