import { FloodgateError } from '@floodgate/core';
import type {
  LeaseGrant,
  LeaseRef,
  LeaseRequest,
  LeaseStore,
  OverrideStore,
  PolicyResult,
  PolicyState,
  Store,
  StoreCall,
} from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import { decodeLeases, decodeState, encodeState, expiryOf, type HeldLease } from './codec.js';
import { KeyMap } from './keys.js';
import type { DenoKvLike } from './kv-types.js';
import { acquire, extend, release, tableWrite } from './leases.js';
import { type DenoKvStoreOptions, readOptions, type Settings } from './options.js';
import type { DenoKvStoreStats } from './stats.js';
import { MAX_KEYS_PER_OP, Transactor, type Write } from './transact.js';

/**
 * A Floodgate store on Deno KV: every process that opens the same database (a local SQLite file,
 * or Deno Deploy's KV) shares exact limits. Each decision reads its keys with one `getMany`,
 * decides with core's reference evaluation (`evaluateAll`) on this process's clock, and commits
 * its writes in one atomic operation that checks every key it read is unchanged; when another
 * writer got in between, it reads and decides again, at most `maxRetries` times. A denial writes
 * nothing. This process's calls on one identity queue, and those queued meanwhile share the next
 * read and commit. It also holds leases (`createConcurrencyLimiter`) and overrides
 * (`limiter.override`). It never opens or closes the connection.
 * @example
 * In Deno (`deno run --unstable-kv`): `Deno.openKv()`; in Node: `openKv(path)` from `@deno/kv`.
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { DenoKvStore, type DenoKvLike } from '@floodgate/deno-kv';
 *
 * declare const kv: DenoKvLike; // await Deno.openKv()
 * const limiter = createLimiter({
 *   store: new DenoKvStore(kv),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 *   prefix: 'api',
 * });
 * const d = await limiter.limit('key_123');
 * ```
 * @public
 */
export class DenoKvStore implements Store, LeaseStore, OverrideStore {
  /** For metrics and traces (`Store.kind`). */
  readonly kind: string = 'deno-kv';
  /** Behind I/O (a file, or Deno Deploy's network): the limiter's remote defaults apply. */
  readonly remote: boolean = true;

  readonly #settings: Settings;
  readonly #keys: KeyMap;
  readonly #tx: Transactor;

  constructor(kv: DenoKvLike, options: DenoKvStoreOptions = {}) {
    if (
      typeof kv !== 'object' ||
      kv === null ||
      typeof (kv as Partial<DenoKvLike>).getMany !== 'function' ||
      typeof (kv as Partial<DenoKvLike>).atomic !== 'function'
    ) {
      throw new FloodgateError(
        'INVALID_OPTION',
        'DenoKvStore needs a Deno KV connection: await Deno.openKv(), or openKv() from @deno/kv',
      );
    }
    this.#settings = readOptions(options);
    this.#keys = new KeyMap(this.#settings.root);
    this.#tx = new Transactor(kv, this.#settings);
  }

  /** A fresh in-process MemoryStore on this store's clock: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.#settings.now });
  }

  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    try {
      const n = call.policies.length;
      const keys = call.keys.map((k) => this.#keys.of(k));
      // Override keys are read, never checked: only blind writes (writeOverrides) change them,
      // so a decision that read one an instant before such a write is ordered before it.
      let from = keys.length;
      if (call.overrides === true) {
        from = n;
        for (const p of call.policies) if (p.blockForMs !== undefined) from++;
      }
      const to = call.overrides === true ? from + n : from;
      if (keys.length - (to - from) > MAX_KEYS_PER_OP) {
        throw new FloodgateError(
          'INVALID_OPTION',
          `DenoKvStore: a decision checks at most ${MAX_KEYS_PER_OP} keys in one atomic operation (one per policy, one per blockFor); this limiter's need ${keys.length - (to - from)}`,
        );
      }
      return this.#tx.evaluate(call.keys[0]!, {
        call,
        keys,
        unchecked: (i) => i >= from && i < to,
        deadline: call.deadline,
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Deletes the keys in one atomic operation, after this process's calls on them. */
  reset(keys: readonly string[]): Promise<void> {
    try {
      if (keys.length === 0) return Promise.resolve();
      const kvKeys = keys.map((k) => this.#keys.of(k));
      const writes = kvKeys.map((_, at) => ({ at, value: null, expireIn: 0 }));
      return this.#tx.serial(keys[0]!, () => this.#tx.blind(kvKeys, writes));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Grants the lease when `cost` slots are free (see `LeaseStore`). */
  acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    return this.#lease(request, request.deadline, (live, now) => {
      const { grant, next } = acquire(live, request, now);
      return { result: grant, next };
    });
  }

  /** Frees this lease only (see `LeaseStore`). */
  releaseLease(lease: LeaseRef): Promise<boolean> {
    return this.#lease(lease, undefined, (live) => {
      const next = release(live, lease);
      return { result: next !== undefined, next };
    });
  }

  /** Moves a live lease's expiry to `leaseMs` from now (see `LeaseStore`). */
  extendLease(lease: LeaseRef, leaseMs: number): Promise<boolean> {
    return this.#lease(lease, undefined, (live, now) => {
      const next = extend(live, lease, leaseMs, now);
      return { result: next !== undefined, next };
    });
  }

  /** One lease step on the identity's lease table: `next` is the table to write, if any. */
  #lease<T>(
    lease: LeaseRef,
    deadline: number | undefined,
    step: (live: HeldLease[], now: number) => { result: T; next: HeldLease[] | undefined },
  ): Promise<T> {
    try {
      const margin = this.#settings.marginMs;
      return this.#tx.run(lease.key, this.#keys.of(lease.key), deadline, (entry, now) => {
        const { result, next } = step(decodeLeases(entry.value, now), now);
        return next === undefined ? { result } : { result, write: tableWrite(next, now, margin) };
      });
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Sets or deletes one identity's overrides (see `OverrideStore`) in one atomic operation: each
   * ends at its `until` on the store's clock.
   * @beta
   */
  writeOverrides(keys: readonly string[], states: readonly (PolicyState | null)[]): Promise<void> {
    try {
      const kvKeys = keys.map((k) => this.#keys.of(k));
      const now = this.#tx.now();
      const writes = kvKeys.map((_, at): Write => {
        const s = states[at];
        // An override that has ended (or none) is a delete, as in the Redis stores.
        if (s === null || s === undefined || !(s[0]! > now))
          return { at, value: null, expireIn: 0 };
        const until = s[0]!;
        return {
          at,
          value: encodeState(s, until),
          expireIn: until - now + this.#settings.marginMs,
        };
      });
      return this.#tx.blind(kvKeys, writes);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Each key's override in force (see `OverrideStore`).
   * @beta
   */
  async readOverrides(keys: readonly string[]): Promise<readonly (PolicyState | undefined)[]> {
    const entries = await this.#tx.read(keys.map((k) => this.#keys.of(k)));
    const now = this.#tx.now();
    return entries.map((e) => decodeState(e.value, now));
  }

  /** The store's clock (`now` option): the limiter's blocked-key cache times entries with it. */
  now(): number {
    return this.#settings.now();
  }

  /**
   * The time in ms until the state under a Floodgate key ends on the store's clock, or undefined
   * when it holds none: for tests and debugging (one read).
   */
  async ttl(key: string): Promise<number | undefined> {
    const [entry] = await this.#tx.read([this.#keys.of(key)]);
    const end = expiryOf(entry!.value);
    const left = end === undefined ? 0 : end - this.#tx.now();
    return left > 0 ? left : undefined;
  }

  /**
   * Commits and conflicts so far (each conflict is one retry, or a failure after `maxRetries`).
   * @beta
   */
  get stats(): DenoKvStoreStats {
    return { ...this.#tx.stats };
  }
}
