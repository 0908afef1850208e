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

export interface NodeRedisStoreOptions {
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
   * connected (`isReady` is false), instead of letting node-redis queue the command until it
   * reconnects. Useful without a limiter `timeoutMs`.
   * @default false
   */
  rejectIfNotReady?: boolean;
}

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

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

function unavailable(error: unknown): FloodgateError {
  if (isFloodgateError(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FloodgateError('STORE_UNAVAILABLE', `Redis (node-redis) failed: ${message}`, {
    cause: error,
  });
}

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
export class NodeRedisStore implements Store {
  readonly remote = true;
  readonly #send: (firstKey: string, args: Args) => Promise<unknown>;
  readonly #client: NodeRedisClient;
  readonly #clientClock: boolean;
  readonly #now: () => number;
  readonly #rejectIfNotReady: boolean;

  constructor(client: NodeRedisClient, options: NodeRedisStoreOptions = {}) {
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
    const clock = options.clock ?? 'server';
    if (clock !== 'server' && clock !== 'client') {
      throw new FloodgateError('INVALID_OPTION', `clock must be 'server' or 'client'`);
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'now must be a function returning ms');
    }
    this.#client = client;
    if (typeof (client as Partial<NodeRedisClusterLike>).getSlotMaster === 'function') {
      const cluster = client as NodeRedisClusterLike;
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
    if (this.#rejectIfNotReady) {
      const c = this.#client;
      const ready = typeof c.isReady === 'boolean' ? c.isReady : c.isOpen !== false;
      if (!ready) throw new FloodgateError('STORE_UNAVAILABLE', 'Redis (node-redis) is not ready');
    }
    const n = call.keys.length;
    const tail = [String(n), ...call.keys, ...encodeScriptArgs(call, now)];
    const firstKey = call.keys[0]!;
    let reply: unknown;
    try {
      reply = await this.#send(firstKey, ['EVALSHA', LIMIT_SCRIPT_SHA1, ...tail]);
    } catch (error) {
      if (!isNoScript(error)) throw unavailable(error);
      // The script cache was emptied: EVAL loads it again on the node that owns the keys.
      try {
        reply = await this.#send(firstKey, ['EVAL', LIMIT_SCRIPT, ...tail]);
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
      await this.#send(keys[0]!, ['DEL', ...keys]);
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.#now });
  }
}
