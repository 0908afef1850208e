import {
  decodeScriptReply,
  encodeScriptArgs,
  FloodgateError,
  isFloodgateError,
  LIMIT_SCRIPT,
  LIMIT_SCRIPT_SHA1,
  type PolicyResult,
  type Store,
  type StoreCall,
} from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import type { Cluster, Redis } from 'ioredis';

export interface IoRedisStoreOptions {
  /**
   * Whose clock decides. `'server'`: the script reads Redis `TIME`, so app servers whose clocks
   * disagree still share one timeline. `'client'`: the script uses `now()` from this process;
   * for deterministic tests and for Redis-compatible servers without `TIME` in scripts.
   * @default 'server'
   */
  clock?: 'server' | 'client';
  /**
   * The clock in integer ms used with `clock: 'client'`, and by the in-process fallback store.
   * @default Date.now
   */
  now?: () => number;
  /**
   * Fail a decision at once (the limiter then applies `onStoreError`) while the client is not
   * connected (`status !== 'ready'`), instead of letting ioredis queue the command until it
   * reconnects or gives up. Useful without a limiter `timeoutMs`.
   * @default false
   */
  rejectIfNotReady?: boolean;
}

/** An ioredis connection to one Redis node, or an ioredis Cluster. */
export type IoRedisClient = Redis | Cluster;

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

function unavailable(error: unknown): FloodgateError {
  if (isFloodgateError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FloodgateError('STORE_UNAVAILABLE', `Redis (ioredis) failed: ${message}`, {
    cause: error,
  });
}

/**
 * The ioredis store: every decision is one `EVALSHA` of Floodgate's limit script, so all
 * processes sharing the Redis server (or Cluster) share exact limits. On `NOSCRIPT` (script cache
 * flushed, restart, failover) it re-sends the script with `EVAL` and the same arguments. It never
 * connects, disconnects or configures the client it is given.
 * @example
 * const limiter = createLimiter({
 *   store: new IoRedisStore(new Redis(process.env.REDIS_URL)),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 */
export class IoRedisStore implements Store {
  readonly remote = true;
  readonly #client: IoRedisClient;
  readonly #clientClock: boolean;
  readonly #now: () => number;
  readonly #rejectIfNotReady: boolean;

  constructor(client: IoRedisClient, options: IoRedisStoreOptions = {}) {
    if (
      typeof client !== 'object' ||
      client === null ||
      typeof (client as Partial<Redis>).evalsha !== 'function'
    ) {
      throw new FloodgateError('INVALID_OPTION', 'IoRedisStore needs an ioredis Redis or Cluster');
    }
    const clock = options.clock ?? 'server';
    if (clock !== 'server' && clock !== 'client') {
      throw new FloodgateError('INVALID_OPTION', `clock must be 'server' or 'client'`);
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'now must be a function returning ms');
    }
    this.#client = client;
    this.#clientClock = clock === 'client';
    this.#now = options.now ?? Date.now;
    this.#rejectIfNotReady = options.rejectIfNotReady === true;
  }

  async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    let now: number | undefined;
    if (this.#clientClock) {
      now = this.#now();
      if (!Number.isSafeInteger(now) || now < 0) {
        throw new FloodgateError('INVALID_OPTION', `now() must return integer ms, got ${now}`);
      }
    }
    const args = encodeScriptArgs(call, now);
    const n = call.keys.length;
    const client = this.#client;
    if (this.#rejectIfNotReady && client.status !== 'ready') {
      throw new FloodgateError(
        'STORE_UNAVAILABLE',
        `Redis (ioredis) is not ready: ${client.status}`,
      );
    }
    let reply: unknown;
    try {
      reply = await client.evalsha(LIMIT_SCRIPT_SHA1, n, ...call.keys, ...args);
    } catch (error) {
      if (!isNoScript(error)) throw unavailable(error);
      // The script cache was emptied: EVAL loads it again on the node that owns the keys.
      try {
        reply = await client.eval(LIMIT_SCRIPT, n, ...call.keys, ...args);
      } catch (retryError) {
        throw unavailable(retryError);
      }
    }
    return decodeScriptReply(reply, n);
  }

  async reset(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    try {
      // All keys of one identity share a hash tag: one DEL, one slot.
      await this.#client.del(...keys);
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.#now });
  }
}
