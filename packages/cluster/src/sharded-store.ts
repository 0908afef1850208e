import {
  Breaker,
  type BreakerOptions,
  FloodgateError,
  isFloodgateError,
  type PolicyResult,
  type Store,
  type StoreCall,
} from '@floodgate/core';
import { HealthBoard, type ShardHealth, type ShardHealthEvent } from './health.js';
import { type Contender, hashTagOf, pick, seedOf } from './rendezvous.js';

/**
 * A shard with a stable name and, optionally, a weight.
 * @example
 * Named shards: removing `eu-2` later moves only the identities it held.
 * ```ts
 * import { ShardedStore, type ShardSpec } from '@floodgate/cluster';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const shards: ShardSpec[] = [
 *   { name: 'eu-1', store: new IoRedisStore(new Redis('redis://10.0.0.1:6379')) },
 *   { name: 'eu-2', store: new IoRedisStore(new Redis('redis://10.0.0.2:6379')), weight: 2 },
 * ];
 * const store = new ShardedStore(shards);
 * ```
 */
export interface ShardSpec {
  /** Any Floodgate store: an `IoRedisStore` or `NodeRedisStore` on one node, a `MemoryStore`… */
  store: Store;
  /**
   * What the hashing knows the shard by. Identities follow names, not positions: name your
   * shards when you may remove one from the middle of the list or reorder them.
   * @default its index in the list, as a string ('0', '1', …)
   */
  name?: string;
  /**
   * Its share of identities relative to the others (weighted rendezvous hashing): a shard of
   * weight 2 gets about twice the identities of a shard of weight 1. A positive finite number.
   * @default 1
   */
  weight?: number;
}

/**
 * Options of {@link ShardedStore}: the clock, a health listener and the per-shard breakers.
 * @example
 * ```ts
 * import { ShardedStore, type ShardedStoreOptions } from '@floodgate/cluster';
 * import type { Store } from '@floodgate/core';
 *
 * declare const shards: Store[];
 * const options: ShardedStoreOptions = {
 *   onHealthChange: (e) => console.warn(`shard ${e.name}: ${e.from} → ${e.to}`),
 *   breaker: { failures: 3, cooldownMs: 2_000 },
 * };
 * const store = new ShardedStore(shards, options);
 * ```
 */
export interface ShardedStoreOptions {
  /**
   * The clock the limiter's blocked-key cache runs on. Shards decide on their own clocks; the
   * cache must run on the same one, so this is only needed when the shards use a client clock
   * that is not the first shard's.
   * @default the first shard's `now` when every shard has one (all on one client clock, e.g.
   * `MemoryStore`s or Redis stores with `clock: 'client'`), otherwise none (`Date.now`)
   */
  now?: () => number;
  /**
   * Called whenever a shard goes from healthy to failing or back (see `ShardState`). It runs
   * inside the failing or succeeding call: keep it quick; what it throws is ignored.
   * @default none
   */
  onHealthChange?: (event: ShardHealthEvent) => void;
  /**
   * A circuit breaker per shard (core's `BreakerOptions`): once a shard keeps failing, its
   * identities go to `onStoreError` at once instead of each waiting on the dead shard, and the
   * other shards are untouched. This is why a limiter on a ShardedStore has no breaker of its own
   * by default (`isolatesFailures`): one limiter-wide breaker would send every identity to the
   * fallback when one shard fails. `onStateChange` there does not name the shard: watch
   * `onHealthChange` and `health()[i].circuit` instead. `false`: no breakers.
   * @default on for each remote shard (5 failures in 10 s open it for 1 s, then 1 probe)
   */
  breaker?: boolean | BreakerOptions;
}

const OPTION_NAMES = ['now', 'onHealthChange', 'breaker'];

interface Shard {
  readonly store: Store;
  readonly name: string;
  readonly weight: number;
}

function isStore(value: unknown): value is Store {
  const s = value as Partial<Store> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.evaluate === 'function' &&
    typeof s.reset === 'function'
  );
}

function toShards(stores: unknown): Shard[] {
  if (!Array.isArray(stores) || stores.length === 0) {
    throw new FloodgateError('INVALID_OPTION', 'ShardedStore needs a non-empty array of stores');
  }
  const shards = stores.map((entry: unknown, i): Shard => {
    if (isStore(entry)) return { store: entry, name: String(i), weight: 1 };
    const spec = entry as Partial<ShardSpec> | null;
    if (typeof spec !== 'object' || spec === null || !isStore(spec.store)) {
      throw new FloodgateError('INVALID_OPTION', `shard ${i} is neither a store nor { store }`);
    }
    for (const key of Object.keys(spec)) {
      if (key !== 'store' && key !== 'name' && key !== 'weight') {
        throw new FloodgateError('INVALID_OPTION', `shard ${i}: unknown field "${key}"`);
      }
    }
    const name = spec.name ?? String(i);
    if (typeof name !== 'string' || name.length === 0) {
      throw new FloodgateError('INVALID_OPTION', `shard ${i}: name must be a non-empty string`);
    }
    const weight = spec.weight ?? 1;
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0) {
      throw new FloodgateError('INVALID_OPTION', `shard ${i}: weight must be a positive number`);
    }
    return { store: spec.store, name, weight };
  });
  const names = new Set(shards.map((s) => s.name));
  if (names.size !== shards.length) {
    throw new FloodgateError('INVALID_OPTION', 'ShardedStore: shard names must be unique');
  }
  return shards;
}

/**
 * Spreads identities over several independent stores (standalone Redis or Valkey nodes, or any
 * Floodgate store) by rendezvous hashing of the identity's hash tag: every policy key of one
 * identity lands on the same shard, so a multi-policy decision stays one atomic call there, and
 * adding or removing a shard moves only about 1/N of the identities. A failing shard fails only
 * its own identities' calls (`STORE_UNAVAILABLE`, decided by the limiter's `onStoreError`);
 * `health()` and `onHealthChange` say which shard and since when. The constructor throws
 * `FloodgateError('INVALID_OPTION')` on an empty list, a duplicate name or a bad option.
 * @example
 * ```ts
 * import { ShardedStore } from '@floodgate/cluster';
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const shard = (url: string) => new IoRedisStore(new Redis(url), { rejectIfNotReady: true });
 * const store = new ShardedStore([
 *   shard('redis://10.0.0.1:6379'),
 *   shard('redis://10.0.0.2:6379'),
 *   { store: shard('redis://10.0.0.3:6379'), weight: 2 }, // twice the identities
 * ]);
 * const limiter = createLimiter({ store, policy: tokenBucket({ limit: 100, interval: '1m' }) });
 * ```
 */
export class ShardedStore implements Store {
  /** True when any shard is behind a network hop: the limiter then keeps its blocked-key cache. */
  readonly remote: boolean;
  /** The shards' common client clock, if they have one (see `ShardedStoreOptions.now`). */
  readonly now?: () => number;
  /**
   * A ShardedStore over the shards' fallbacks (same names, weights and hashing), so each
   * identity falls back where its own shard does. Present only when every shard has one.
   */
  readonly fallback?: () => Store;
  readonly #shards: readonly Shard[];
  readonly #contenders: readonly Contender[];
  readonly #equal: boolean;
  readonly #health: HealthBoard;
  readonly #breakers: readonly (Breaker | undefined)[];
  /** Tells the limiter not to wrap this store in one breaker: each shard has its own. */
  readonly isolatesFailures = true;

  constructor(stores: readonly (Store | ShardSpec)[], options: ShardedStoreOptions = {}) {
    if (typeof options !== 'object' || options === null) {
      throw new FloodgateError('INVALID_OPTION', 'ShardedStore: options must be an object');
    }
    for (const key of Object.keys(options)) {
      if (!OPTION_NAMES.includes(key)) {
        throw new FloodgateError('INVALID_OPTION', `ShardedStore: unknown option "${key}"`);
      }
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'ShardedStore: now must be a function');
    }
    if (options.onHealthChange !== undefined && typeof options.onHealthChange !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'ShardedStore: onHealthChange must be a function');
    }
    const shards = toShards(stores);
    this.#shards = shards;
    this.#contenders = shards.map((s) => ({ seed: seedOf(s.name), weight: s.weight }));
    this.#equal = shards.every((s) => s.weight === shards[0]!.weight);
    this.#health = new HealthBoard(shards, options.onHealthChange);
    const b = options.breaker ?? true;
    if (typeof b !== 'boolean' && (typeof b !== 'object' || b === null)) {
      throw new FloodgateError(
        'INVALID_OPTION',
        'ShardedStore: breaker must be a boolean or options',
      );
    }
    // Checked even when no shard is remote: a typo must not wait for the day one is.
    if (typeof b === 'object') new Breaker(b);
    this.#breakers = shards.map((shard, i) => {
      if (b === false || shard.store.remote !== true) return undefined;
      const given = b === true ? {} : b;
      this.#health.circuit(i, 'closed');
      return new Breaker({
        ...given,
        onStateChange: (state, error) => {
          this.#health.circuit(i, state);
          given.onStateChange?.(state, error);
        },
      });
    });
    this.remote = shards.some((s) => s.store.remote === true);
    const first = shards[0]!.store;
    if (options.now !== undefined) this.now = options.now;
    else if (shards.every((s) => typeof s.store.now === 'function')) this.now = () => first.now!();
    if (shards.every((s) => typeof s.store.fallback === 'function')) {
      this.fallback = () =>
        new ShardedStore(
          shards.map((s) => ({ store: s.store.fallback!(), name: s.name, weight: s.weight })),
        );
    }
  }

  /** The name of the shard that holds `key` (any policy key of an identity gives the same). */
  locate(key: string): string {
    return this.#shards[this.#indexOf(key)]!.name;
  }

  /** Every shard's state and counters, in the order given to the constructor. */
  health(): ShardHealth[] {
    return this.#health.snapshot();
  }

  #indexOf(key: string): number {
    return this.#shards.length === 1 ? 0 : pick(hashTagOf(key), this.#contenders, this.#equal);
  }

  async #onShard<T>(key: string, run: (store: Store) => Promise<T>): Promise<T> {
    const index = this.#indexOf(key);
    const shard = this.#shards[index]!;
    const breaker = this.#breakers[index];
    if (breaker !== undefined && !breaker.admit()) {
      throw new FloodgateError(
        'STORE_UNAVAILABLE',
        `shard "${shard.name}": its circuit breaker is open, the shard was not called`,
      );
    }
    try {
      const result = await run(shard.store);
      breaker?.success();
      this.#health.succeeded(index);
      return result;
    } catch (cause) {
      // A mistake in the call (a bad `now()`, say) is not the shard's failure.
      if (isFloodgateError(cause) && !cause.code.startsWith('STORE_')) {
        breaker?.release();
        throw cause;
      }
      const code = isFloodgateError(cause) ? cause.code : 'STORE_UNAVAILABLE';
      const message = cause instanceof Error ? cause.message : String(cause);
      const error = new FloodgateError(code, `shard "${shard.name}": ${message}`, { cause });
      breaker?.failure(error);
      this.#health.failed(index, error);
      throw error;
    }
  }

  async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    if (call.keys.length === 0) {
      throw new FloodgateError('INVALID_KEY', 'ShardedStore: a call needs at least one key');
    }
    return this.#onShard(call.keys[0]!, (store) => store.evaluate(call));
  }

  async reset(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    await this.#onShard(keys[0]!, (store) => store.reset(keys));
  }
}
