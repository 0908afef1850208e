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

// One entry per key. Expiry lives in the entry rather than in lru-cache's TTL tracking: a read
// compares one number, and a write to a live key updates the entry in place.
interface Entry {
  state: PolicyState;
  expiresAt: number;
}

/**
 * The embedded store: state in this process, bounded by an LRU. Each key expires when its policy
 * state is back to empty, so memory follows live keys, not history. No timers per key.
 * @example
 * const limiter = createLimiter({ store: new MemoryStore(), policy: tokenBucket({ limit: 100, interval: '1m' }) });
 */
export class MemoryStore implements Store {
  readonly #cache: LRUCache<string, Entry>;
  readonly #now: () => number;
  // Expired entries leave lazily (when read, overwritten, or evicted as LRU victims). A sweep
  // after as many writes as there are entries keeps memory following live keys at O(1)
  // amortized cost, with no timers.
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
    this.#now = options.now ?? Date.now;
    this.#cache = new LRUCache<string, Entry>({ max });
  }

  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    try {
      const now = this.#now();
      const keys = call.keys;
      const entries: (Entry | undefined)[] = [];
      const states: (PolicyState | undefined)[] = [];
      for (const key of keys) {
        const e = this.#cache.get(key);
        const live = e !== undefined && e.expiresAt > now;
        entries.push(live ? e : undefined);
        states.push(live ? e.state : undefined);
      }
      const { results, writes } = evaluateAll(call, states, now);
      for (let i = 0; i < writes.length; i++) {
        const w = writes[i];
        if (w === undefined) continue;
        const e = entries[i];
        if (e !== undefined) {
          e.state = w.state;
          e.expiresAt = now + w.ttlMs;
        } else {
          this.#cache.set(keys[i]!, { state: w.state, expiresAt: now + w.ttlMs });
          this.#writesSinceSweep += 1;
        }
      }
      if (this.#writesSinceSweep >= this.#sweepAfter) this.#sweep(now);
      return Promise.resolve(results);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #sweep(now: number): void {
    const expired: string[] = [];
    this.#cache.forEach((e, key) => {
      if (e.expiresAt <= now) expired.push(key);
    });
    for (const key of expired) this.#cache.delete(key);
    this.#writesSinceSweep = 0;
    this.#sweepAfter = Math.max(1000, this.#cache.size);
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
    const e = this.#cache.peek(key);
    const left = e === undefined ? 0 : e.expiresAt - this.#now();
    if (left <= 0) {
      // Expired: drop it now, as a read would.
      this.#cache.delete(key);
      return undefined;
    }
    return left;
  }
}
