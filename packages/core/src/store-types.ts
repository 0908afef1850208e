// The store contract, types only: the policies' composition (policies/compose.ts) and the
// limiter both build on it, so it imports no code (a value here made compose.ts and this file
// import each other). `@floodgate/core/store` (store.ts) re-exports it.
import type { Policy } from './types.js';

/**
 * One decision's worth of work for a store: every policy of one identity, atomically.
 * @example
 * Calling a store directly, with the keys a limiter with prefix `'test'` would build.
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { encodeIdentity, policyKey, type StoreCall } from '@floodgate/core/store';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const policy = tokenBucket({ limit: 10, interval: '1s' });
 * const key = policyKey('test', encodeIdentity('user_42'), policy.id);
 * const call: StoreCall = { keys: [key], policies: [policy], cost: 1, mode: 'limit' };
 * const [result] = await new MemoryStore().evaluate(call);
 * ```
 * @public
 */
export interface StoreCall {
  /**
   * One key per policy, same order as `policies`, then one block key per policy with
   * `blockFor` (`blockKey`), in policy order, then with `overrides` one override key per policy
   * (`overrideKey`); all share the identity's hash tag.
   */
  readonly keys: readonly string[];
  /**
   * True for a limiter made with `overrides: true`: the last `policies.length` keys are the
   * policies' override keys, read in the same atomic call (`evaluateAll` says what an override
   * does). Absent otherwise, and the call is exactly what it was before overrides existed.
   * @beta
   */
  readonly overrides?: boolean;
  /**
   * `'0.1'` for a limiter made with `migrateKeys: '0.1'`: after the other keys, each policy's
   * key as 0.1 named it (`legacyPolicyId`), then each blocking policy's 0.1 block key. The call
   * decides on the stricter state of the two and writes both, each in its release's format
   * (`evaluateAll`; docs/algorithms.md, "Migrating keys from 0.1"). Absent otherwise.
   * @beta
   */
  readonly migrate?: '0.1';
  readonly policies: readonly Policy[];
  /** Positive safe integer, already validated against every policy's capacity. */
  readonly cost: number;
  /**
   * Per-policy costs, in policy order, when they are not all `cost` (a `Cost` record, a
   * settle): each policy is evaluated, charged or refunded by its own, instead of `cost`. In
   * `'limit'` and `'refund'` each is a safe integer ≥ 0 within its policy's capacity (0: the
   * policy charges nothing and denies only while it is over its limit or blocked); in `'settle'`
   * any safe integer. Absent otherwise: a store that predates it stays correct for every call
   * without it, and the limiter sends it only with per-policy costs.
   * @beta
   */
  readonly costs?: readonly number[];
  /**
   * `'limit'` charges when every policy admits; `'peek'` evaluates a cost of 1 and writes nothing;
   * `'refund'` gives `cost` back to every policy (each kind's rule is in docs/algorithms.md) and
   * leaves blocks as they are. A refund's results are each policy's as `'limit'` would have
   * evaluated the cost before the refund, uncharged; the limiter does not read them.
   * `'settle'` (a reservation corrected, `costs` always set) charges each positive cost whatever
   * the policy's capacity (debt), refunds each negative one, and leaves blocks as they are; its
   * results are unread too (`evaluateAll` says what they are).
   */
  readonly mode: 'limit' | 'peek' | 'refund' | 'settle';
  /**
   * The `performance.now()` instant at which the caller stops waiting (the limiter's
   * `timeoutMs`). A store that can must not charge when it gets to the call later than that: the
   * caller has answered without it, and a late charge would count a request nobody admitted.
   */
  readonly deadline?: number;
  /**
   * True when the caller reads `Store.waitUntil` each time its timer fires (the limiter does,
   * for a store that has it): only then may the store hold the call past `deadline`, for the
   * caller then waits as long as the store says. Any other call is sent by its deadline or never.
   * @beta
   */
  readonly extendable?: boolean;
  /**
   * The encoded identity `keys` were built from (`encodeIdentity`), with `prefix`: an in-process
   * store can key its state by (prefix, policy id, identity) without building or hashing `keys`.
   * The limiter always sets both; a store must still work from `keys` alone.
   */
  readonly identity?: string;
  /** The limiter's prefix; set together with `identity`. */
  readonly prefix?: string;
}

/**
 * One policy's verdict as a store reports it, after the store applied (or skipped) the charge.
 * @example
 * ```ts
 * import type { PolicyResult, Store, StoreCall } from '@floodgate/core/store';
 *
 * declare const store: Store;
 * declare const call: StoreCall;
 * const results: readonly PolicyResult[] = await store.evaluate(call);
 * const admitted = results.every((r) => r.allowed);
 * ```
 * @public
 */
export interface PolicyResult {
  readonly allowed: boolean;
  readonly remaining: number;
  readonly resetAfterMs: number;
  readonly retryAfterMs: number;
  readonly delayMs: number;
  /**
   * Present when a stored override applied to this policy in this call: the limit it ran on
   * (0: the override blocks) and when the override ends (epoch ms, on the store's clock).
   * @beta
   */
  readonly override?: { readonly limit: number; readonly until: number };
}

/**
 * What a store implements. `evaluate` must be atomic per call: evaluate every policy at one
 * instant, and charge all of them only when all admit. An in-process store can run
 * `evaluateAll`; a Redis-protocol store is a `RedisStore` over a `RedisTransport`
 * (`@floodgate/core/redis`).
 * @example
 * A minimal in-process store on `evaluateAll` (no eviction; `MemoryStore` is the real one).
 * ```ts
 * import { evaluateAll, type PolicyState, type Store } from '@floodgate/core/store';
 *
 * const states = new Map<string, PolicyState>();
 * const store: Store = {
 *   async evaluate(call) {
 *     const before = call.keys.map((k) => states.get(k));
 *     const { results, writes } = evaluateAll(call, before, Date.now());
 *     writes.forEach((w, i) => w && states.set(call.keys[i]!, w.state));
 *     return results;
 *   },
 *   async reset(keys) {
 *     for (const key of keys) states.delete(key);
 *   },
 * };
 * ```
 * @public
 */
export interface Store {
  /**
   * What the store is, for metrics and traces (the `floodgate.store` attribute): `'memory'`,
   * `'redis'`, `'ioredis'`, `'node-redis'`, `'iovalkey'`, `'valkey-glide'`, `'sharded'`,
   * `'deno-kv'`, `'durable-objects'`, `'upstash'`. A store
   * without one is reported as `'custom'`: a class name is no substitute, bundlers rename classes
   * (`_MemoryStore`).
   */
  readonly kind?: string;
  evaluate(call: StoreCall): Promise<readonly PolicyResult[]>;
  /**
   * Optional synchronous `evaluate`, for in-process stores: the limiter then decides without a
   * promise per store call (when it has no `timeoutMs` and no breaker). The returned array and
   * its objects may be reused by the store's next call: read them before calling it again. The
   * call is the limiter's to reuse too: it is refilled for the next decision once this returns,
   * so a store that keeps anything of it copies it.
   */
  evaluateSync?(call: StoreCall): readonly PolicyResult[];
  /** Deletes the keys: the identity is back to its empty state. */
  reset(keys: readonly string[]): Promise<void>;
  /**
   * True for stores behind a network hop. The limiter then keeps a local blocked-key cache by
   * default, and uses `fallback()` (if given) when the store fails.
   */
  readonly remote?: boolean;
  /**
   * True when the store contains failures itself, per part (a `ShardedStore` breaks the circuit
   * of each shard): one limiter-wide breaker would send every identity to the fallback when one
   * part fails, so the limiter's `breaker` then defaults to off.
   */
  readonly isolatesFailures?: boolean;
  /** The store to decide with while this one is failing (the default for `onStoreError`). */
  fallback?(): Store;
  /**
   * The clock decisions are made on, when it is local (MemoryStore, Redis with `clock: 'client'`).
   * The limiter's blocked-key cache times entries with it; without it, with `Date.now`.
   */
  now?(): number;
  /**
   * Tells `listener` of changes to identities' state made by any process (a reset, an override),
   * so a limiter's blocked-key cache can drop what they make stale; returns the function that
   * stops telling it. A store that has no such feed leaves it out, and the caches then serve a
   * denial only for a bounded time (`blockCache.maxStaleMs`). `RedisStore` implements it with
   * pub/sub (docs/algorithms.md#the-blocked-key-cache).
   * @beta
   */
  watch?(listener: (change: StoreChange) => void): () => void;
  /**
   * For a store that may hold a call back, unsent, while it is busy (`RedisStore`: a burst past
   * what it keeps on the wire waits while Redis keeps answering): the `performance.now()` instant
   * its caller stops waiting for `call`, later than `call.deadline` when the store moved it
   * (undefined: no deadline). The limiter's timer asks each time it fires; a held call whose
   * wait is over when asked is never sent, so it is never charged. Without it, `call.deadline`.
   * @beta
   */
  waitUntil?(call: StoreCall): number | undefined;
}

/**
 * What a store's change feed (`Store.watch`) reports.
 * - `'identity'`: the state of `identity` (encoded, as in `StoreCall.identity`) under `prefix`
 *   changed in a way a cached denial may not have seen (a reset, an override).
 * - `'alive'`: every change made until now (within a round trip) has been reported.
 * - `'down'`: from now on changes may go unreported, until the next `'alive'`.
 * - `'missed'`: changes may have gone unreported (the feed just started, or came back after
 *   being down): anything cached before is suspect.
 * @example
 * A listener that keeps a set of identities to recheck.
 * ```ts
 * import type { Store, StoreChange } from '@floodgate/core/store';
 *
 * declare const store: Store;
 * const stale = new Set<string>();
 * const stop = store.watch?.((change: StoreChange) => {
 *   if (change.type === 'identity' && change.prefix === 'api') stale.add(change.identity);
 * });
 * stop?.();
 * ```
 * @beta
 */
export type StoreChange =
  | { readonly type: 'identity'; readonly prefix: string; readonly identity: string }
  | { readonly type: 'alive' | 'down' | 'missed' };
