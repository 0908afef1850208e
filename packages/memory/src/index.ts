import {
  evaluateAll,
  FloodgateError,
  type PolicyResult,
  type PolicyState,
  type Store,
  type StoreCall,
} from '@floodgate/core';
import { LRUCache } from 'lru-cache';

export interface MemoryStoreOptions {
  /**
   * Most policy keys held at once (one key per identity and policy); the least recently used
   * is evicted past this, which forgets that identity's usage. @default 100_000
   */
  maxKeys?: number;
  /** The clock, in integer ms. Inject one for deterministic tests. @default Date.now */
  now?: () => number;
}

/**
 * The embedded store: state in this process, bounded by an LRU. Each key expires when its policy
 * state is back to empty, so memory follows live keys, not history. No timers per key.
 * @example
 * const limiter = createLimiter({ store: new MemoryStore(), policy: tokenBucket({ limit: 100, interval: '1m' }) });
 */
export class MemoryStore implements Store {
  readonly #cache: LRUCache<string, PolicyState>;
  readonly #now: () => number;
  // Expired entries leave lazily (on read, or as LRU victims). A sweep after as many writes as
  // there are entries keeps memory following live keys at O(1) amortized cost, with no timers.
  #writesSinceSweep = 0;
  #sweepAfter = 1000;

  constructor(options: MemoryStoreOptions = {}) {
    for (const key of Object.keys(options)) {
      if (key !== 'maxKeys' && key !== 'now') {
        throw new FloodgateError('INVALID_OPTION', `MemoryStore: unknown option "${key}"`);
      }
    }
    const max = options.maxKeys ?? 100_000;
    if (!Number.isSafeInteger(max) || max <= 0) {
      throw new FloodgateError('INVALID_OPTION', 'MemoryStore: maxKeys must be a positive integer');
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'MemoryStore: now must be a function');
    }
    const now = options.now ?? Date.now;
    this.#now = now;
    // lru-cache reads TTLs off `perf.now()`; giving it our clock keeps expiry and decisions on
    // one timeline, and `ttlResolution: 0` keeps it from caching a stale reading.
    this.#cache = new LRUCache<string, PolicyState>({ max, ttlResolution: 0, perf: { now } });
  }

  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    try {
      const now = this.#now();
      const states = call.keys.map((k) => this.#cache.get(k));
      const { results, writes } = evaluateAll(call, states, now);
      for (let i = 0; i < writes.length; i++) {
        const w = writes[i];
        if (w !== undefined) {
          this.#cache.set(call.keys[i]!, w.state, { ttl: w.ttlMs });
          this.#writesSinceSweep += 1;
        }
      }
      if (this.#writesSinceSweep >= this.#sweepAfter) {
        this.#cache.purgeStale();
        this.#writesSinceSweep = 0;
        this.#sweepAfter = Math.max(1000, this.#cache.size);
      }
      return Promise.resolve(results);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  reset(keys: readonly string[]): Promise<void> {
    for (const k of keys) this.#cache.delete(k);
    return Promise.resolve();
  }

  now(): number {
    return this.#now();
  }

  /** Entries held: live keys plus expired ones not yet read or swept. O(1). */
  get size(): number {
    return this.#cache.size;
  }

  /** The remaining TTL of a key in ms, or undefined when it holds no state: for tests and debugging. */
  ttl(key: string): number | undefined {
    if (!this.#cache.has(key)) return undefined;
    return this.#cache.getRemainingTTL(key);
  }
}
