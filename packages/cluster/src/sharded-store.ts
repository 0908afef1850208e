import { FloodgateError, isFloodgateError } from '@floodgate/core';
import {
  isLeaseStore,
  isOverrideStore,
  type LeaseGrant,
  type LeaseRef,
  type LeaseRequest,
  type LeaseStore,
  type OverrideStore,
  type PolicyResult,
  type PolicyState,
  type Store,
  type StoreCall,
  type StoreChange,
} from '@floodgate/core/store';
import { FleetWatch, fingerprintOf, fleetOptions, type MixedFleetEvent } from './fleet.js';
import { ShardGuard } from './guard.js';
import type { ShardHealth } from './health.js';
import { mergeResults, untilOf } from './migration.js';
import { type ShardedStoreOptions, validate } from './options.js';
import { type Contender, hashTagOf, pick, seedOf } from './rendezvous.js';
import { type Until, untilOn, withDeadline } from './sent.js';
import { type Shard, type ShardSpec, toOldShards, toShards } from './shards.js';
import { watchShards } from './watch.js';

/** The old list of a migration, as the hashing needs it. */
interface OldTopology {
  readonly contenders: readonly Contender[];
  readonly equal: boolean;
  /** Position in the old list → index among all guarded shards. */
  readonly index: readonly number[];
  readonly until: number;
}

const contendersOf = (shards: readonly Shard[]): Contender[] =>
  shards.map((s) => ({ seed: seedOf(s.name), weight: s.weight }));
const sameWeights = (shards: readonly Shard[]): boolean =>
  shards.every((s) => s.weight === shards[0]!.weight);

/**
 * Spreads identities over several independent stores (standalone Redis or Valkey nodes, or any
 * Floodgate store) by rendezvous hashing of the identity's hash tag: every policy key of one
 * identity lands on the same shard, so a multi-policy decision stays one atomic call there, and
 * adding or removing a shard moves only about 1/N of the identities. A failing or stalled shard
 * fails only its own identities' calls (`STORE_UNAVAILABLE` / `STORE_TIMEOUT`, decided by the
 * limiter's `onStoreError`); `health()` and `onHealthChange` say which shard and since when. The
 * constructor throws `FloodgateError('INVALID_OPTION')` on an empty list, a duplicate name or a
 * bad option.
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
 * @public
 */
export class ShardedStore implements Store, LeaseStore, OverrideStore {
  /** For metrics and traces (`Store.kind`). */
  readonly kind: string = 'sharded';
  /** True when any shard is behind a network hop: the limiter then keeps its blocked-key cache. */
  readonly remote: boolean;
  /** The shards' common client clock, if they have one (see `ShardedStoreOptions.now`). */
  readonly now?: () => number;
  /**
   * A ShardedStore over the shards' fallbacks (same names, weights and hashing), so each
   * identity falls back where its own shard does. Present only when every shard has one.
   */
  readonly fallback?: () => Store;
  /** This shard list's fingerprint (names and weights), as the fleet check records it. */
  readonly fingerprint: string;
  /** Tells the limiter not to wrap this store in one breaker: each shard has its own. */
  readonly isolatesFailures = true;
  /** The current shards, then the ones only a migration's `from` has (being retired). */
  readonly #shards: readonly Shard[];
  readonly #count: number;
  readonly #contenders: readonly Contender[];
  readonly #equal: boolean;
  readonly #guard: ShardGuard;
  readonly #timeoutMs: number | undefined;
  readonly #old: OldTopology | undefined;
  readonly #fleet: FleetWatch | undefined;
  /**
   * Where each call that did not go as it came went (a copy with this store's own deadline, or
   * a migration's two owners): its shard's reading of when the caller stops waiting.
   */
  readonly #until = new WeakMap<StoreCall, Until>();

  constructor(stores: readonly (Store | ShardSpec)[], options: ShardedStoreOptions = {}) {
    validate(options);
    const current = toShards(stores);
    const b = options.breaker ?? true;
    if (typeof b !== 'boolean' && (typeof b !== 'object' || b === null)) {
      throw new FloodgateError(
        'INVALID_OPTION',
        'ShardedStore: breaker must be a boolean or options',
      );
    }
    const fleet = fleetOptions(options.fleetCheck);
    const old = options.migration && toOldShards(options.migration.from, current);
    const until = options.migration && untilOf(options.migration.until);
    const shards = [...current, ...(old ?? []).filter((s) => !current.includes(s))];
    this.#shards = shards;
    this.#count = current.length;
    this.#contenders = contendersOf(current);
    this.#equal = sameWeights(current);
    this.#timeoutMs = options.timeoutMs;
    this.#guard = new ShardGuard(shards, { breaker: b, onHealthChange: options.onHealthChange });
    this.fingerprint = fingerprintOf(current);
    if (old !== undefined && until !== undefined) {
      this.#old = {
        contenders: contendersOf(old),
        equal: sameWeights(old),
        index: old.map((s) => shards.indexOf(s)),
        until,
      };
    }
    this.remote = shards.some((s) => s.store.remote === true);
    const first = current[0]!.store;
    if (options.now !== undefined) this.now = options.now;
    else if (current.every((s) => typeof s.store.now === 'function')) this.now = () => first.now!();
    if (current.every((s) => typeof s.store.fallback === 'function')) {
      this.fallback = () =>
        new ShardedStore(
          current.map((s) => ({ store: s.store.fallback!(), name: s.name, weight: s.weight })),
          { fleetCheck: false },
        );
    }
    if (fleet !== undefined && this.remote) {
      const from = old && until !== undefined ? { from: fingerprintOf(old), until } : undefined;
      this.#fleet = new FleetWatch(shards, this.#guard, fleet, this.fingerprint, from);
      this.#fleet.start();
    }
  }

  /** The name of the shard that holds `key` (any policy key of an identity gives the same). */
  locate(key: string): string {
    return this.#shards[this.#indexOf(key)]!.name;
  }

  /** Every shard's state and counters: the current shards in order, then any being retired. */
  health(): ShardHealth[] {
    return this.#guard.health.snapshot();
  }

  /**
   * One fleet check now, on every remote shard: the event `onMixedFleet` would get when another
   * process recorded another topology within the current minute, else undefined.
   * Useful in a deploy script before declaring a change done. Records this process's check too.
   * Always undefined with `fleetCheck: false` or without a remote shard.
   */
  async checkFleet(): Promise<MixedFleetEvent | undefined> {
    return this.#fleet?.check();
  }

  /**
   * The shards' change feeds as one (watch.ts): it vouches only while every shard's does.
   * @beta
   */
  watch(listener: (change: StoreChange) => void): () => void {
    return watchShards(
      this.#shards.map((s) => s.store),
      listener,
    );
  }

  /** Stops the fleet check's timer (it never holds the process open). The shards stay open. */
  close(): void {
    this.#fleet?.stop();
  }

  #indexOf(key: string): number {
    return this.#count === 1 ? 0 : pick(hashTagOf(key), this.#contenders, this.#equal);
  }

  /** The old owner of `key` while a migration runs and it differs from the current one. */
  #previous(key: string, owner: number): number | undefined {
    const old = this.#old;
    if (old === undefined || Date.now() >= old.until) return undefined;
    const at = old.index.length === 1 ? 0 : pick(hashTagOf(key), old.contenders, old.equal);
    const index = old.index[at]!;
    return index === owner ? undefined : index;
  }

  #deadline(given: number | undefined): number | undefined {
    if (this.#timeoutMs === undefined) return given;
    const mine = performance.now() + this.#timeoutMs;
    return given === undefined || mine < given ? mine : given;
  }

  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    if (call.keys.length === 0) {
      return Promise.reject(
        new FloodgateError('INVALID_KEY', 'ShardedStore: a call needs at least one key'),
      );
    }
    const key = call.keys[0]!;
    const owner = this.#indexOf(key);
    const deadline = this.#deadline(call.deadline);
    const before = this.#previous(key, owner);
    // The common case, kept to the guard's own work (a burst makes thousands in one loop): the
    // limiter's call to its owner, which `waitUntil` finds again by the call's key.
    if (before === undefined && deadline === call.deadline) {
      return this.#guard.evaluate(owner, call, deadline);
    }
    return this.#elsewhere(call, deadline, owner, before);
  }

  /** A call with this store's own, earlier deadline, or to both owners during a migration. */
  async #elsewhere(
    call: StoreCall,
    deadline: number | undefined,
    owner: number,
    before: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    const sent =
      deadline === undefined || deadline === call.deadline ? call : withDeadline(call, deadline);
    const on = (index: number) => {
      // Recorded even for a shard that cannot move it: `waitUntil` must not ask the owner about
      // a call another shard has.
      this.#until.set(call, untilOn(this.#shards[index]!.store, sent) ?? (() => call.deadline));
      return this.#guard.evaluate(index, sent, deadline);
    };
    if (before === undefined) return on(owner);
    if (call.mode === 'peek') {
      const [was, is] = await Promise.allSettled([on(before), on(owner)]);
      if (was.status === 'rejected') throw was.reason;
      return is.status === 'fulfilled' ? mergeResults(was.value, is.value) : was.value;
    }
    // The old owner first: the old processes charge only there, so it alone knows the whole
    // fleet's count. The new owner is charged only with what the old one admitted, and so learns
    // the count it will hold alone once the migration ends.
    const was = await on(before);
    if (!was.every((r) => r.allowed)) return was;
    try {
      return mergeResults(was, await on(owner));
    } catch (error) {
      if (isFloodgateError(error) && !error.code.startsWith('STORE_')) throw error;
      // Its failure is on its health record; the old owner has already decided and charged.
      return was;
    }
  }

  /**
   * When the caller of `call` stops waiting: the reading of the shard that has it, when that
   * shard's store may hold calls back while it is busy (a Redis store in a burst), else the
   * call's deadline. Without it, a burst on shards that answered as fast as they could timed out
   * in this process, counted as the shards' failures, and opened their breakers (issue 35).
   * @beta
   */
  waitUntil(call: StoreCall): number | undefined {
    const until = this.#until.get(call);
    if (until !== undefined) return until();
    // Not recorded: the call went as it came, to its owner (evaluate's common case).
    if (call.extendable !== true || call.keys.length === 0) return call.deadline;
    const store = this.#shards[this.#indexOf(call.keys[0]!)]!.store;
    return typeof store.waitUntil === 'function' ? store.waitUntil(call) : call.deadline;
  }

  /**
   * Leases (the concurrency limiter) go to the identity's shard, as its decisions do; during a
   * migration to the old owner, where the processes not yet moved hold theirs. Leases granted
   * there are not copied when it ends: for up to `leaseMs` after, the new owner may admit a
   * limit's worth beside them.
   */
  acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    return this.#lease(request.key, (s) => s.acquireLease(request));
  }

  releaseLease(lease: LeaseRef): Promise<boolean> {
    return this.#lease(lease.key, (s) => s.releaseLease(lease));
  }

  extendLease(lease: LeaseRef, leaseMs: number): Promise<boolean> {
    return this.#lease(lease.key, (s) => s.extendLease(lease, leaseMs));
  }

  #lease<T>(key: string, task: (store: LeaseStore) => Promise<T>): Promise<T> {
    const owner = this.#indexOf(key);
    const index = this.#previous(key, owner) ?? owner;
    return this.#guard.run(
      index,
      async (s) => {
        if (!isLeaseStore(s)) {
          throw new FloodgateError('INVALID_OPTION', 'ShardedStore: a shard cannot hold leases');
        }
        return task(s);
      },
      this.#deadline(undefined),
    );
  }

  /**
   * Overrides go to the identity's shard, as its decisions do (their keys carry its hash tag);
   * during a migration to both owners, so whichever decides sees them, as a reset does.
   * @beta
   */
  async writeOverrides(
    keys: readonly string[],
    states: readonly (PolicyState | null)[],
  ): Promise<void> {
    await this.#owners(keys, (s) => this.#overrides(s).writeOverrides(keys, states));
  }

  /**
   * The identity's overrides from its shard (the old owner during a migration: it decides first).
   * @beta
   */
  readOverrides(keys: readonly string[]): Promise<readonly (PolicyState | undefined)[]> {
    if (keys.length === 0) return Promise.resolve([]);
    const owner = this.#indexOf(keys[0]!);
    const index = this.#previous(keys[0]!, owner) ?? owner;
    return this.#guard.run(
      index,
      (s) => this.#overrides(s).readOverrides(keys),
      this.#deadline(undefined),
    );
  }

  #overrides(store: Store): OverrideStore {
    if (!isOverrideStore(store)) {
      throw new FloodgateError('INVALID_OPTION', 'ShardedStore: a shard cannot hold overrides');
    }
    return store;
  }

  async reset(keys: readonly string[]): Promise<void> {
    await this.#owners(keys, (s) => s.reset(keys));
  }

  /** `task` on the keys' owner, and during a migration on the old owner too. */
  async #owners(keys: readonly string[], task: (store: Store) => Promise<void>): Promise<void> {
    if (keys.length === 0) return;
    const owner = this.#indexOf(keys[0]!);
    const deadline = this.#deadline(undefined);
    const before = this.#previous(keys[0]!, owner);
    const owners = before === undefined ? [owner] : [before, owner];
    const done = await Promise.allSettled(owners.map((i) => this.#guard.run(i, task, deadline)));
    for (const d of done) if (d.status === 'rejected') throw d.reason;
  }
}
