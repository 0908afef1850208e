import { FloodgateError, type Policy } from '@floodgate/core';
import {
  checkOptions,
  newVerdict,
  type OptionNames,
  shadowingOf,
  type Verdict,
} from '@floodgate/core/internal';
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
import {
  commit,
  decide,
  type Entry,
  mutableResult,
  type Resolved,
  report,
  specOf,
  splitKey,
  type Table,
} from './entries.js';
import { EvictionClock, evictionOf } from './eviction.js';
import { evaluateGeneral } from './general.js';
import { LeaseTable } from './leases.js';
import { decideOverridden, OverrideTable } from './overrides.js';

/**
 * Options of `MemoryStore`: how many keys it holds at most, and its clock.
 * @example
 * A store with a larger bound and a clock a test moves by hand.
 * ```ts
 * import { MemoryStore, type MemoryStoreOptions } from '@floodgate/memory';
 *
 * let now = 0;
 * const options: MemoryStoreOptions = { maxKeys: 1_000_000, now: () => now };
 * const store = new MemoryStore(options);
 * now += 60_000; // a minute passes for the store
 * ```
 * @public
 */
export interface MemoryStoreOptions {
  /**
   * Most policy keys held at once (one key per identity and policy); past this a key that was
   * not used since it last came up for eviction is dropped, which forgets that identity's usage.
   * @default 100_000
   */
  maxKeys?: number;
  /** The clock, in integer ms. Inject one for deterministic tests. @default Date.now */
  now?: () => number;
}

const OPTION_NAMES = {
  maxKeys: true,
  now: true,
} as const satisfies OptionNames<MemoryStoreOptions>;

/**
 * The embedded store: state in this process, bounded by `maxKeys`. State is held per policy and
 * prefix, keyed by identity: no key string is built or hashed per call. Each key expires when its
 * policy state is back to empty, so memory follows live keys, not history; no timers.
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createLimiter({
 *   store: new MemoryStore({ maxKeys: 50_000 }),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 * const d = await limiter.limit('key_123');
 * ```
 * @public
 */
export class MemoryStore implements Store, LeaseStore, OverrideStore {
  // Kept for the reason Entry keeps one (entries.ts): the class's hidden class outlives the
  // user's last store, and so does the optimized code of the hot path.
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held, never read (see above)
  static readonly #alive = new MemoryStore();

  /** For metrics and traces (`Store.kind`). */
  readonly kind: string = 'memory';

  readonly #now: () => number;
  readonly #eviction: EvictionClock;
  readonly #tables = new Map<string, Table>();
  /** The concurrency limiter's leases (leases.ts): apart from maxKeys, never evicted. */
  readonly #leases: LeaseTable;
  /** Per-identity overrides (overrides.ts): apart from maxKeys, never evicted. */
  readonly #overrides = new OverrideTable();
  readonly #resolved = new WeakMap<readonly Policy[], Resolved>();
  // The last limiter's resolution: one limiter per store is the common case.
  #lastPolicies: readonly Policy[] | undefined;
  #last: Resolved | undefined;
  /** The clock at the first decision: entries count their times from it (see Entry). */
  #epoch: number | undefined;
  // Scratch reused by every call: decisions are made synchronously, one at a time.
  readonly #verdicts: Verdict[] = [];
  readonly #results: ReturnType<typeof mutableResult>[] = [];
  readonly #entries: (Entry | undefined)[] = [];
  readonly #tablesOf: Table[] = [];
  readonly #ids: string[] = [];
  readonly #one = newVerdict();
  readonly #oneResult = mutableResult();
  readonly #oneResults: readonly PolicyResult[] = [this.#oneResult];

  constructor(options: MemoryStoreOptions = {}) {
    checkOptions('MemoryStore', options, OPTION_NAMES);
    const max = options.maxKeys ?? 100_000;
    if (!Number.isSafeInteger(max) || max <= 0) {
      throw new FloodgateError('INVALID_OPTION', 'MemoryStore: maxKeys must be a positive integer');
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'MemoryStore: now must be a function');
    }
    this.#now = options.now ?? Date.now;
    this.#leases = new LeaseTable(this.#now);
    this.#eviction = new EvictionClock(max);
    evictionOf.set(this, this.#eviction);
  }

  #start(now: number): number {
    this.#epoch = now;
    return now;
  }

  #table(name: string): Table {
    let table = this.#tables.get(name);
    if (table === undefined) {
      table = new Map();
      this.#tables.set(name, table);
    }
    return table;
  }

  // Once per limiter (its policies array is frozen and its own), not per key string. Without a
  // prefix (a call with keys only) the tables are found per key instead.
  #resolve(policies: readonly Policy[], prefix: string | undefined): Resolved {
    const last = this.#last;
    if (policies === this.#lastPolicies && last!.prefix === prefix) return last!;
    let r = this.#resolved.get(policies);
    if (r === undefined || r.prefix !== prefix) {
      r = {
        prefix,
        // Penalties, and shadowed policies charged apart from enforced ones, take the general
        // path: the reference composition itself (compose.ts evaluateAll).
        blocking:
          policies.some((p) => p.blockForMs !== undefined) || shadowingOf(policies) !== undefined,
        tables: prefix === undefined ? [] : policies.map((p) => this.#table(`${prefix}{${p.id}`)),
        specs: policies.map(specOf),
      };
      this.#resolved.set(policies, r);
    }
    this.#lastPolicies = policies;
    this.#last = r;
    return r;
  }

  /** Points the scratch arrays at the call's tables and identities. */
  #locate(call: StoreCall, r: Resolved, n: number): void {
    const id = call.identity;
    if (id !== undefined && r.prefix !== undefined) {
      for (let i = 0; i < n; i++) {
        this.#tablesOf[i] = r.tables[i]!;
        this.#ids[i] = id;
      }
      return;
    }
    for (let i = 0; i < n; i++) {
      const [name, key] = splitKey(call.keys[i]!);
      this.#tablesOf[i] = this.#table(name);
      this.#ids[i] = key;
    }
  }

  /**
   * Decides synchronously (the limiter's path to this store). The returned array and its objects
   * are reused by the next call.
   */
  evaluateSync(call: StoreCall): readonly PolicyResult[] {
    const now = this.#now();
    // As the Redis stores do: NaN or a fraction would silently admit everything or skew state.
    if (!Number.isSafeInteger(now) || now < 0) {
      throw new FloodgateError(
        'INVALID_OPTION',
        `MemoryStore: now() must return non-negative integer ms, got ${now}`,
      );
    }
    const epoch = this.#epoch ?? this.#start(now);
    const id = call.identity;
    // A prefix without an identity (or the reverse) is a call by keys: its tables come from them.
    const res = this.#resolve(call.policies, id === undefined ? undefined : call.prefix);
    // A limiter with overrides, one in force for the identity (overrides.ts): one plain policy
    // decides in place on it, anything else on the reference path.
    const ov = call.overrides === true ? this.#overrides.inForce(call, now) : undefined;
    const specs = res.specs;
    const n = specs.length;
    if (
      ov !== undefined &&
      n === 1 &&
      !res.blocking &&
      call.mode !== 'refund' &&
      call.mode !== 'settle' &&
      call.costs === undefined &&
      id !== undefined &&
      res.prefix !== undefined
    ) {
      return decideOverridden(
        res.tables[0]!,
        id,
        specs[0]!,
        ov[0]!,
        this.#eviction,
        epoch,
        now,
        call,
        this.#one,
      );
    }
    // Refunds, settles and per-policy costs are rare next to limits: the reference decides them.
    if (
      res.blocking ||
      call.mode === 'refund' ||
      call.mode === 'settle' ||
      call.costs !== undefined ||
      ov !== undefined
    ) {
      const over = call.overrides === true ? (ov ?? call.policies.map(() => undefined)) : undefined;
      return evaluateGeneral(call, (name) => this.#table(name), this.#eviction, epoch, now, over);
    }
    if (n === 1 && res.prefix !== undefined) return this.#single(call, res, id!, epoch, now);
    while (this.#verdicts.length < n) {
      this.#verdicts.push(newVerdict());
      this.#results.push(mutableResult());
    }
    this.#locate(call, res, n);
    const peek = call.mode === 'peek';
    const cost = peek ? 1 : call.cost;
    let all = true;
    // An expired entry is not dropped when read: a caller whose clock is behind may still find
    // it live, and a returning identity reuses it in place. Inserts sweep expired ones.
    for (let i = 0; i < n; i++) {
      const e = this.#tablesOf[i]!.get(this.#ids[i]!);
      const live = e !== undefined && e.expiresAt > now - epoch;
      if (live) e.used = true;
      this.#entries[i] = e;
      const v = this.#verdicts[i]!;
      decide(specs[i]!, live, e, epoch, now, cost, v);
      if (!v.allowed) all = false;
    }
    const charge = all && !peek;
    if (charge) {
      // Entries it holds first: an insert's sweep looks at every table, and would take one of
      // this call's entries that it read expired, before its new expiry was written.
      for (let i = 0; i < n; i++) {
        const e = this.#entries[i];
        if (e !== undefined) commit(e, this.#verdicts[i]!, epoch, now);
      }
      for (let i = 0; i < n; i++) {
        if (this.#entries[i] !== undefined) continue;
        const e = this.#eviction.insert(this.#tablesOf[i]!, this.#ids[i]!, now - epoch);
        commit(e, this.#verdicts[i]!, epoch, now);
      }
    }
    for (let i = 0; i < n; i++) {
      this.#entries[i] = undefined;
      report(this.#results[i]!, this.#verdicts[i]!, charge, peek);
    }
    return this.#results;
  }

  // The common case, one policy from a limiter: the same steps as the loop, without the scratch.
  #single(
    call: StoreCall,
    res: Resolved,
    id: string,
    epoch: number,
    now: number,
  ): readonly PolicyResult[] {
    const table = res.tables[0]!;
    const e = table.get(id);
    const live = e !== undefined && e.expiresAt > now - epoch;
    if (live) e.used = true;
    const peek = call.mode === 'peek';
    const v = this.#one;
    decide(res.specs[0]!, live, e, epoch, now, peek ? 1 : call.cost, v);
    const r = this.#oneResult;
    const charge = v.allowed && !peek;
    if (charge) commit(e ?? this.#eviction.insert(table, id, now - epoch), v, epoch, now);
    report(r, v, charge, peek);
    return this.#oneResults;
  }

  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    try {
      const shared = this.evaluateSync(call);
      const out: PolicyResult[] = [];
      for (let i = 0; i < call.policies.length; i++) out.push({ ...shared[i]! });
      return Promise.resolve(out);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The concurrency limiter's calls, on this store's clock (see `LeaseStore`, leases.ts). */
  acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    return this.#leases.run((now) => this.#leases.acquire(request, now));
  }

  /** Frees this lease only (see `LeaseStore`). */
  releaseLease(lease: LeaseRef): Promise<boolean> {
    return this.#leases.run((now) => this.#leases.release(lease, now));
  }

  /** Moves a live lease's expiry (see `LeaseStore`). */
  extendLease(lease: LeaseRef, leaseMs: number): Promise<boolean> {
    return this.#leases.run((now) => this.#leases.extend(lease, leaseMs, now));
  }

  /** Slots held by the live leases under a concurrency limiter's key: for tests and debugging. */
  leasesHeld(key: string): number {
    return this.#leases.held(key);
  }

  /**
   * Sets or deletes one identity's overrides (see `OverrideStore`), on this store's clock.
   * @beta
   */
  writeOverrides(keys: readonly string[], states: readonly (PolicyState | null)[]): Promise<void> {
    this.#overrides.write(keys, states, this.#now());
    return Promise.resolve();
  }

  /**
   * Each key's override in force (see `OverrideStore`).
   * @beta
   */
  readOverrides(keys: readonly string[]): Promise<readonly (PolicyState | undefined)[]> {
    const now = this.#now();
    return Promise.resolve(keys.map((key) => this.#overrides.read(key, now)));
  }

  reset(keys: readonly string[]): Promise<void> {
    for (const key of keys) {
      this.#leases.delete(key);
      if (this.#overrides.size > 0) this.#overrides.delete(key);
      const [name, id] = splitKey(key);
      const table = this.#tables.get(name);
      if (table !== undefined) this.#eviction.remove(table, id);
    }
    return Promise.resolve();
  }

  now(): number {
    return this.#now();
  }

  /** Entries held: live keys plus expired ones not yet reused, swept or evicted. O(1). */
  get size(): number {
    return this.#eviction.size;
  }

  /** The remaining TTL of a key in ms, or undefined when it holds no state: for tests and debugging. */
  ttl(key: string): number | undefined {
    // An override key (overrides.ts) lives until its override's end.
    const o = this.#overrides.size > 0 ? this.#overrides.read(key, this.#now()) : undefined;
    if (o !== undefined) return o[0]! - this.#now();
    const [name, id] = splitKey(key);
    const table = this.#tables.get(name);
    const e = table?.get(id);
    const left = e === undefined ? 0 : e.expiresAt + (this.#epoch ?? 0) - this.#now();
    if (left <= 0) {
      if (table !== undefined) this.#eviction.remove(table, id);
      return undefined;
    }
    return left;
  }
}
