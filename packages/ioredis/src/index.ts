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

  protected async sendWithWait(
    _firstKey: string,
    name: string,
    args: string[],
    count: number,
    timeoutMs: number,
  ): Promise<[unknown, number]> {
    // One pipeline: one round trip, one connection (on a Cluster, the node owning the keys; the
    // keyless WAIT rides along). An ASK or MOVED for the script comes back as its error reply:
    // ioredis does not redirect a pipeline in which another command (WAIT) succeeded.
    const replies = await this.#client
      .pipeline()
      .call(name, args)
      .call('WAIT', String(count), String(timeoutMs))
      .exec();
    if (replies === null || replies.length !== 2) throw new Error('the pipeline was discarded');
    const [[scriptError, script], [waitError, waited]] = replies as [
      [Error | null, unknown],
      [Error | null, unknown],
    ];
    if (waitError !== null) throw waitError;
    return [scriptError ?? script, Number(waited)];
  }

  protected isReady(): boolean {
    return this.#client.status === 'ready';
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.clockNow });
  }
}
