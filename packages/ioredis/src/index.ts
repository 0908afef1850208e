import {
  FloodgateError,
  RedisScriptStore,
  type RedisStoreOptions,
  type Store,
} from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import type { Cluster, Redis } from 'ioredis';

/** Options of `IoRedisStore`; see `RedisStoreOptions` in `@floodgate/core` for each default. */
export type IoRedisStoreOptions = RedisStoreOptions;

/** An ioredis connection to one Redis node, or an ioredis Cluster. */
export type IoRedisClient = Redis | Cluster;

/**
 * The ioredis store (ioredis 5 and 6, `Redis` and `Cluster`): every decision is one `EVALSHA` of
 * Floodgate's limit script, so all processes sharing the Redis server (or Cluster) share exact
 * limits. On `NOSCRIPT` (script cache flushed, restart, failover) it re-sends the script with
 * `EVAL` and the same arguments. It never connects, disconnects or configures the client.
 * Commands go through `client.call`, so auto-pipelining, `keyPrefix` and Cluster routing apply.
 * @example
 * const limiter = createLimiter({
 *   store: new IoRedisStore(new Redis(process.env.REDIS_URL)),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 */
export class IoRedisStore extends RedisScriptStore {
  readonly #client: IoRedisClient;

  constructor(client: IoRedisClient, options: IoRedisStoreOptions = {}) {
    super('ioredis', options);
    if (
      typeof client !== 'object' ||
      client === null ||
      typeof (client as Partial<Redis>).call !== 'function'
    ) {
      throw new FloodgateError('INVALID_OPTION', 'IoRedisStore needs an ioredis Redis or Cluster');
    }
    this.#client = client;
  }

  protected send(_firstKey: string, name: string, args: string[]): Promise<unknown> {
    // ioredis finds the keys itself (for Cluster routing and keyPrefix).
    return this.#client.call(name, args);
  }

  protected isReady(): boolean {
    return this.#client.status === 'ready';
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.clockNow });
  }
}
