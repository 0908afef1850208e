import {
  FloodgateError,
  RedisScriptStore,
  type RedisStoreOptions,
  type Store,
} from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';

/** Options of `NodeRedisStore`; see `RedisStoreOptions` in `@floodgate/core` for each default. */
export type NodeRedisStoreOptions = RedisStoreOptions;

type Args = string[];

/**
 * A single node-redis connection: `createClient()` of `redis` / `@redis/client` 4 and later
 * (also a v5+ client pool), or `@node-redis/client` 1.x. Only `sendCommand` is used.
 */
export interface NodeRedisClientLike {
  sendCommand(args: Args): Promise<unknown>;
  readonly isReady?: boolean;
  readonly isOpen?: boolean;
}

/** A node-redis `createCluster()`: commands are routed to the master owning the first key. */
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

export type NodeRedisClient = NodeRedisClientLike | NodeRedisClusterLike;

/**
 * The node-redis store: every decision is one `EVALSHA` of Floodgate's limit script, so all
 * processes sharing the Redis server (or Cluster) share exact limits. On `NOSCRIPT` (script cache
 * flushed, restart, failover) it re-sends the script with `EVAL` and the same arguments. It never
 * connects, disconnects or configures the client it is given.
 * @example
 * const client = await createClient({ url: process.env.REDIS_URL }).connect();
 * const limiter = createLimiter({
 *   store: new NodeRedisStore(client),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 */
export class NodeRedisStore extends RedisScriptStore {
  readonly #send: (firstKey: string, args: Args) => Promise<unknown>;
  readonly #client: NodeRedisClient;

  constructor(client: NodeRedisClient, options: NodeRedisStoreOptions = {}) {
    super('node-redis', options);
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
    this.#client = client;
    if (typeof (client as Partial<NodeRedisClusterLike>).getSlotMaster === 'function') {
      const cluster = client as NodeRedisClusterLike;
      // The first key routes the command to the master owning its slot (node-redis 1.x cannot
      // find the key of EVALSHA by itself).
      this.#send = (firstKey, args) => cluster.sendCommand(firstKey, false, args);
    } else {
      // node-redis 4 in legacyMode keeps the promise API under `.v4`.
      const legacy = client as { v4?: NodeRedisClientLike; options?: { legacyMode?: boolean } };
      const single =
        legacy.options?.legacyMode === true && legacy.v4 !== undefined
          ? legacy.v4
          : (client as NodeRedisClientLike);
      this.#send = (_firstKey, args) => single.sendCommand(args);
    }
  }

  protected send(firstKey: string, name: string, args: string[]): Promise<unknown> {
    return this.#send(firstKey, [name, ...args]);
  }

  protected async sendWithWait(
    firstKey: string,
    name: string,
    args: string[],
    count: number,
    timeoutMs: number,
  ): Promise<[unknown, number]> {
    // Sent in the same tick, both routed by the first key: node-redis writes them together on
    // the connection to the node owning the keys (one round trip; WAIT counts that
    // connection's writes).
    const [script, waited] = await Promise.allSettled([
      this.#send(firstKey, [name, ...args]),
      this.#send(firstKey, ['WAIT', String(count), String(timeoutMs)]),
    ]);
    if (waited.status === 'rejected') throw waited.reason;
    return [script.status === 'fulfilled' ? script.value : script.reason, Number(waited.value)];
  }

  protected isReady(): boolean {
    const c = this.#client;
    return typeof c.isReady === 'boolean' ? c.isReady : c.isOpen !== false;
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.clockNow });
  }
}
