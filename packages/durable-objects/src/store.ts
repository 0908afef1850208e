import { FloodgateError } from '@floodgate/core';
import { checkOptions, type OptionNames } from '@floodgate/core/internal';
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
import { objectName } from './routing.js';
import { type FloodgateRpc, wireCall } from './wire.js';

/**
 * The Durable Object namespace binding the store routes through (`env.<BINDING>`): Workers'
 * `DurableObjectNamespace` of a class made with `floodgateObject` fits it.
 * @example
 * ```ts
 * import { DurableObjectStore, type FloodgateNamespace } from '@floodgate/durable-objects';
 *
 * declare const env: { FLOODGATE: FloodgateNamespace };
 * const store = new DurableObjectStore(env.FLOODGATE);
 * ```
 * @public
 */
export interface FloodgateNamespace {
  /** The id of the object with this name (the same name, the same object, in every isolate). */
  idFromName(name: string): unknown;
  /** A stub of the object with that id, through which the store calls it. */
  get(id: unknown): unknown;
}

/**
 * Options of `DurableObjectStore`.
 * @example
 * A store on the caller's clock (deterministic tests), spreading identities over 32 objects.
 * ```ts
 * import type { DurableObjectStoreOptions } from '@floodgate/durable-objects';
 *
 * let now = 1_700_000_000_000;
 * const options: DurableObjectStoreOptions = { clock: 'client', now: () => now, shards: 32 };
 * ```
 * @public
 */
export interface DurableObjectStoreOptions {
  /**
   * Whose clock decides. `'object'`: the object's `Date.now()` when the call runs there, so
   * isolates whose clocks disagree share one timeline per identity, as Redis `TIME` does for the
   * Redis stores. `'client'`: `now()` of the calling isolate, sent with each call; for
   * deterministic tests.
   * @default 'object'
   */
  clock?: 'object' | 'client';
  /** The clock in integer ms with `clock: 'client'`, and the fallback store's. @default Date.now */
  now?: () => number;
  /**
   * Spread identities over this many objects (by a hash of prefix and identity) instead of one
   * object per identity. Fewer, warmer objects; but one object runs one call at a time, so each
   * shard caps the decisions per second of all its identities together (see the README).
   * Changing it starts every identity from empty objects.
   * @default undefined (one object per identity)
   */
  shards?: number;
}

const OPTION_NAMES = {
  clock: true,
  now: true,
  shards: true,
} as const satisfies OptionNames<DurableObjectStoreOptions>;

const unavailable = (cause: unknown): FloodgateError =>
  cause instanceof FloodgateError
    ? cause
    : new FloodgateError('STORE_UNAVAILABLE', 'the Durable Object call failed', { cause });

const lateError = (what: string): FloodgateError =>
  new FloodgateError('STORE_TIMEOUT', `the ${what} reached its Durable Object after its deadline`);

/**
 * The Durable Objects store: every identity's state lives in one Durable Object (a class made
 * with `floodgateObject`, SQLite-backed), which runs each call to completion on its own, so a
 * limit holds exactly across every isolate and location of a Worker. One RPC per decision; the
 * decision is core's reference evaluation (`evaluateAll`), made inside the object on the state it
 * holds in its storage. Leases (`createConcurrencyLimiter`) and overrides live there too.
 * @example
 * A Worker limited per client IP; `env.FLOODGATE` binds a class made with `floodgateObject`.
 * ```ts
 * import { createLimiter, type Limiter, tokenBucket } from '@floodgate/core';
 * import { DurableObjectStore, type FloodgateNamespace } from '@floodgate/durable-objects';
 *
 * let limiter: Limiter | undefined; // one per isolate: bindings come with the first request
 * export default {
 *   async fetch(request: Request, env: { FLOODGATE: FloodgateNamespace }): Promise<Response> {
 *     limiter ??= createLimiter({
 *       store: new DurableObjectStore(env.FLOODGATE),
 *       policy: tokenBucket({ limit: 100, interval: '1m' }),
 *     });
 *     const d = await limiter.limit(request.headers.get('cf-connecting-ip') ?? 'unknown');
 *     return d.allowed ? new Response('ok') : new Response('slow down', { status: 429 });
 *   },
 * };
 * ```
 * @public
 */
export class DurableObjectStore implements Store, LeaseStore, OverrideStore {
  /** For metrics and traces (`Store.kind`). */
  readonly kind: string = 'durable-objects';
  /** Behind a network hop: the limiter keeps a blocked-key cache, a timeout and a breaker. */
  readonly remote = true;
  /** Set with `clock: 'client'` only: the limiter's blocked-key cache then runs on this clock. */
  readonly now?: () => number;
  readonly #namespace: FloodgateNamespace;
  readonly #clockNow: () => number;
  readonly #shards: number | undefined;

  constructor(namespace: FloodgateNamespace, options: DurableObjectStoreOptions = {}) {
    const ns = namespace as Partial<FloodgateNamespace> | null;
    if (
      typeof ns !== 'object' ||
      ns === null ||
      typeof ns.idFromName !== 'function' ||
      typeof ns.get !== 'function'
    ) {
      throw new FloodgateError(
        'INVALID_OPTION',
        'DurableObjectStore needs a Durable Object namespace binding (env.<BINDING>)',
      );
    }
    if (typeof options !== 'object' || options === null) {
      throw new FloodgateError('INVALID_OPTION', 'DurableObjectStore: options must be an object');
    }
    checkOptions('DurableObjectStore', options, OPTION_NAMES);
    const clock = options.clock ?? 'object';
    if (clock !== 'object' && clock !== 'client') {
      throw new FloodgateError(
        'INVALID_OPTION',
        "DurableObjectStore: clock must be 'object' or 'client'",
      );
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'DurableObjectStore: now must be a function');
    }
    const shards = options.shards;
    if (shards !== undefined && (!Number.isSafeInteger(shards) || shards <= 0)) {
      throw new FloodgateError(
        'INVALID_OPTION',
        'DurableObjectStore: shards must be a positive integer',
      );
    }
    this.#namespace = ns as FloodgateNamespace;
    this.#clockNow = options.now ?? Date.now;
    this.#shards = shards;
    if (clock === 'client') this.now = this.#clockNow;
  }

  /** The stub of the object holding `key` (a stub per call: stubs are not shared across requests). */
  #stub(key: string): FloodgateRpc {
    const ns = this.#namespace;
    return ns.get(ns.idFromName(objectName(key, this.#shards))) as FloodgateRpc;
  }

  /** The caller's now with `clock: 'client'` (checked), else undefined: the object reads its own. */
  #now(): number | undefined {
    if (this.now === undefined) return undefined;
    const now = this.now();
    if (!Number.isSafeInteger(now) || now < 0) {
      throw new FloodgateError(
        'INVALID_OPTION',
        `DurableObjectStore: now() must return non-negative integer ms, got ${now}`,
      );
    }
    return now;
  }

  /**
   * A `performance.now()` deadline as epoch ms on this isolate's wall clock, which the object
   * compares with its own; floored, so it falls early rather than late (see the README).
   */
  #deadline(deadline: number | undefined): number | undefined {
    if (deadline === undefined) return undefined;
    return Math.floor(Date.now() + (deadline - performance.now()));
  }

  /** Runs `fn`, reporting a throw or a rejection as `STORE_UNAVAILABLE` (a FloodgateError as is). */
  async #send<T>(fn: () => Promise<T>): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      throw unavailable(error);
    }
  }

  /** One decision: one RPC to the identity's object, which decides and writes atomically. */
  async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    const now = this.#now();
    // A peek writes nothing: late or not, it cannot charge.
    const deadline = call.mode === 'peek' ? undefined : this.#deadline(call.deadline);
    const request = { call: wireCall(call), now, deadline };
    const results = await this.#send(() => this.#stub(call.keys[0]!).decide(request));
    if (results === null) throw lateError('decision');
    return results;
  }

  /** Deletes the keys in their object (all of one identity, one RPC). */
  async reset(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return;
    const list = keys.slice();
    await this.#send(() => this.#stub(list[0]!).reset(list));
  }

  /** One RPC: grants the lease when `cost` slots are free (see `LeaseStore`). */
  async acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    const now = this.#now();
    const step = {
      op: 'acquire' as const,
      key: request.key,
      id: request.id,
      cost: request.cost,
      limit: request.limit,
      leaseMs: request.leaseMs,
      now,
      deadline: this.#deadline(request.deadline),
    };
    const grant = await this.#send(() => this.#stub(request.key).lease(step));
    if (grant === null) throw lateError('lease request');
    return grant;
  }

  /** One RPC: frees this lease only (see `LeaseStore`). */
  async releaseLease(lease: LeaseRef): Promise<boolean> {
    const step = { op: 'release' as const, key: lease.key, id: lease.id, cost: lease.cost };
    const now = this.#now();
    const done = await this.#send(() => this.#stub(lease.key).lease({ ...step, now }));
    return done?.allowed === true;
  }

  /** One RPC: moves a live lease's expiry (see `LeaseStore`). */
  async extendLease(lease: LeaseRef, leaseMs: number): Promise<boolean> {
    const step = { op: 'extend' as const, key: lease.key, id: lease.id, cost: lease.cost, leaseMs };
    const now = this.#now();
    const done = await this.#send(() => this.#stub(lease.key).lease({ ...step, now }));
    return done?.allowed === true;
  }

  /**
   * Sets or deletes one identity's overrides in one RPC (see `OverrideStore`).
   * @beta
   */
  async writeOverrides(
    keys: readonly string[],
    states: readonly (PolicyState | null)[],
  ): Promise<void> {
    if (keys.length === 0) return;
    const now = this.#now();
    const k = keys.slice();
    const s = states.map((x) => (x === null ? null : x.slice()));
    await this.#send(() => this.#stub(k[0]!).writeOverrides(k, s, now));
  }

  /**
   * Each key's override in force, in one RPC (see `OverrideStore`).
   * @beta
   */
  async readOverrides(keys: readonly string[]): Promise<readonly (PolicyState | undefined)[]> {
    if (keys.length === 0) return [];
    const now = this.#now();
    const k = keys.slice();
    return this.#send(() => this.#stub(k[0]!).readOverrides(k, now));
  }

  /** The remaining TTL of a key in ms, or undefined when it holds no state: for tests and debugging. */
  ttl(key: string): Promise<number | undefined> {
    return this.#send(async () => this.#stub(key).ttl(key, this.#now()));
  }

  /**
   * A fresh in-process MemoryStore: the limiter's default `onStoreError`. On Workers it holds
   * the limits per isolate while the objects cannot be reached: looser (each isolate counts on
   * its own), never gone.
   */
  fallback(): Store {
    return new MemoryStore({ now: this.#clockNow });
  }
}
