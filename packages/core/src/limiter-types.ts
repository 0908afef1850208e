// The public shape of a limiter and of its options, types only; limiter-config.ts checks the
// options and works out their defaults, limiter.ts builds the limiter.
import type { BreakerOptions } from './breaker.js';
import type { DecisionEvent } from './decision-event.js';
import type { FloodgateError } from './errors.js';
import type { Cost, Reservation, ReserveOptions } from './reserve-types.js';
import type { Store } from './store-types.js';
import type { Telemetry } from './telemetry-types.js';
import type { Decision, Policy } from './types.js';

/**
 * The blocked-key cache's bounds (`LimiterOptions.blockCache`).
 * @example
 * A cache that serves a denial at most 200 ms while the store's change feed is down.
 * ```ts
 * import { createLimiter, fixedWindow, type BlockCacheOptions } from '@floodgate/core';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const blockCache: BlockCacheOptions = { max: 50_000, maxStaleMs: 200 };
 * const limiter = createLimiter({
 *   store: new IoRedisStore(new Redis()),
 *   policy: fixedWindow({ limit: 5, window: '1m', blockFor: '15m' }),
 *   blockCache,
 * });
 * ```
 * @public
 */
export interface BlockCacheOptions {
  /** Entries kept (least recently used evicted first). @default 10_000 */
  max?: number;
  /**
   * How long a cached denial may be served while the store's change feed is not known healthy
   * (not yet subscribed, disconnected, its heartbeat unanswered, or a store without a feed): a
   * reset made by another process is then seen within this bound instead of a round trip. With
   * a healthy feed a denial is served until its `retryAfterMs`. 0: only while the feed vouches.
   * @default 1000
   * @beta
   */
  maxStaleMs?: number;
}

/**
 * What `createLimiter` takes: the store, the policies, and what to do when the store fails.
 * @example
 * Options for a Redis-backed limiter that denies rather than guesses during an outage.
 * ```ts
 * import { createLimiter, type LimiterOptions, slidingWindow } from '@floodgate/core';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const options: LimiterOptions = {
 *   store: new IoRedisStore(new Redis()),
 *   policy: slidingWindow({ limit: 100, window: '1m' }),
 *   prefix: 'api',
 *   timeoutMs: 50,
 *   onStoreError: 'deny',
 * };
 * const limiter = createLimiter(options);
 * ```
 * @public
 */
export interface LimiterOptions {
  /** Where state lives: `new MemoryStore()`, `new IoRedisStore(redis)`, … */
  store: Store;
  /** One policy, or several that must all admit; a denial charges none of them. */
  policy: Policy | readonly Policy[];
  /** Namespaces the keys: `<prefix>:{<identity>}:<policy id>`. @default 'floodgate' */
  prefix?: string;
  /**
   * What to decide when the store fails or times out: `'throw'` a FloodgateError, `'allow'`,
   * `'deny'`, or decide with another store. @default the store's `fallback()` (remote stores
   * supply an in-process MemoryStore, so limits keep holding per node), otherwise `'throw'`
   */
  onStoreError?: 'throw' | 'allow' | 'deny' | Store;
  /**
   * Give up on the store after this many ms (then `onStoreError` applies, and the breaker counts a
   * failure); a script that reaches Redis after that charges nothing. Counted from when the call
   * is sent: a Redis store that is busy holds a burst's tail unsent while Redis keeps answering
   * (up to 20 × this), and gives up on it after this many ms of silence (docs/failure-modes.md,
   * "A busy store is not an outage"). `false`: wait as long as the store does (a Redis client
   * may queue a command for a minute or more while it reconnects).
   * @default 250 for remote stores (`store.remote`), none for in-process ones
   */
  timeoutMs?: number | false;
  /**
   * Answer denied identities in-process until their `retryAfterMs` has passed, with no store
   * round trip (see `BlockCacheOptions`). A reset or override made by any process drops the
   * entry through the store's change feed (`Store.watch`); while the feed is not known healthy,
   * a denial is served at most `maxStaleMs`. @default on (max 10 000, maxStaleMs 1000) for remote
   * stores, off otherwise
   */
  blockCache?: boolean | BlockCacheOptions;
  /** Called with every store failure the limiter absorbed, so it can be alerted on. */
  onError?: (error: FloodgateError) => void;
  /**
   * A circuit breaker around the store (see `BreakerOptions`): once the store keeps failing,
   * decisions go to `onStoreError` at once instead of each waiting on a dead store.
   * @default on for remote stores (5 failures in 10 s open it for 1 s, then 1 probe), off otherwise
   * and off for a store that `isolatesFailures` (it breaks per part, e.g. per shard)
   */
  breaker?: boolean | BreakerOptions;
  /**
   * Shadow mode: report denials, do not enforce them. Every decision is allowed; one that
   * enforcing would have denied says `shadowDenied: true`, with that denial's `retryAfterMs` and
   * `binding`. The store is charged exactly as when enforcing (a would-be denial charges
   * nothing). Policies can also be shadowed one by one (`tokenBucket({ …, shadow: true })`).
   * @default false
   */
  shadow?: boolean;
  /**
   * Called after each decision of `limit()` and `wait()` (not `peek()`), with its outcome and
   * duration; also when the store failed and the call rejected (`outcome: 'error'`). An exception
   * it throws does not change the decision: it is logged with `console.error` (at most once in
   * 10 s per limiter). Unset, it costs nothing.
   */
  onDecision?: (event: DecisionEvent) => void;
  /**
   * Where metrics and traces go: `openTelemetry()` from `@floodgate/core/telemetry`, or your own
   * `Telemetry`. Not a `true` switch, so the main entry never imports the optional
   * `@opentelemetry/api` (edge bundles never pull it in). @default none: nothing is recorded
   */
  telemetry?: Telemetry;
  /**
   * Per-identity overrides stored beside the counts: the limiter gets `override()` and
   * `overrides` (`LimiterWithOverrides`), and each decision reads the identity's override keys
   * in its one store call, so every process honours a change at its next decision. Off, the
   * limiter's calls and Redis scripts are exactly those of a limiter without them (no extra key
   * read). The store must hold overrides (`isOverrideStore`; every Floodgate store does).
   * See docs/changing-limits.md. @default false
   * @beta
   */
  overrides?: boolean;
  /**
   * `'0.1'` while a fleet moves from 0.1 to 1.0, whose policy keys have new names and encodings:
   * each decision reads both the 1.0 key and the 0.1 key of each policy (and of each block),
   * decides on the stricter state, and writes the result to both, each in its own format, so 0.1
   * processes still running and 1.0 processes count as one and nobody is admitted a limit's worth
   * twice. Deploy 1.0 with it on every process; once no 0.1 process is left, remove it (the 0.1
   * keys then expire on their TTL). Limits must not change while it is set: the 0.1 key's name is
   * computed from the current limits. Off, calls and scripts are exactly those without it.
   * docs/algorithms.md, "Migrating keys from 0.1". @default false
   * @beta
   */
  migrateKeys?: '0.1' | false;
  /**
   * `'1.0'` while processes of 1.0.x share the store with this one: token buckets then write
   * only the state forms 1.0 reads. Since 1.1 a token bucket whose burst is not its limit also
   * stores its fill time (so a change of limit or burst never admits more than the larger burst
   * plus the faster refill, docs/algorithms.md); 1.0's script fails on that state, and a 1.0
   * limiter then decides by its per-process fallback.
   * Deploy 1.1 with it on every process, remove it once no 1.0 process is left. With it, a
   * bucket reads as 1.0 did, except a state that a 1.1 process without it wrote. A stored
   * override on such a bucket still writes the new form. docs/upgrading.md. @default false
   * @beta
   */
  writeFormat?: '1.0' | false;
}

/**
 * The options of `limiter.wait()`.
 * @example
 * ```ts
 * import type { WaitOptions } from '@floodgate/core';
 *
 * const options: WaitOptions = { cost: 2, maxWaitMs: 30_000, signal: AbortSignal.timeout(60_000) };
 * ```
 * @public
 */
export interface WaitOptions {
  /** Units to charge, as for `limit()`. @default 1 */
  cost?: number;
  /**
   * The longest wait, in ms (a whole number ≥ 0, or `Infinity`). A denial whose `retryAfterMs`
   * exceeds what is left of it rejects at once with `WAIT_TIMEOUT`.
   */
  maxWaitMs: number;
  /** Aborting rejects the wait at once with `ABORTED`; a waiter that never got a turn charges nothing. */
  signal?: AbortSignal;
}

/**
 * What `Limiter.refund` gives back.
 * @example
 * Giving back exactly what one admission charged.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 *
 * declare const limiter: Limiter;
 * const decision = await limiter.limit('key_123', { cost: 3 });
 * // ... the work failed and should not count:
 * await limiter.refund('key_123', { cost: 3, decision });
 * ```
 * @public
 */
export interface RefundOptions {
  /** Units to give back: the admission's own cost. @default 1 */
  cost?: number;
  /**
   * The decision of the admission being given back (this limiter's, for this identity). With it
   * the refund gives back only what that admission charged: nothing when it was denied or decided
   * without the store (`reason`), only the enforced policies when a shadowed one would have denied
   * (`shadowDenied`: the shadowed policies were not charged). Without it, every policy gets `cost`
   * back, which over-refunds a shadowed policy that was not charged.
   */
  decision?: Decision;
}

/**
 * A limiter made by `createLimiter`: decides, peeks and resets per identity.
 * @example
 * A function that takes any limiter, whatever its store and policies.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 *
 * async function guard(limiter: Limiter, apiKey: string): Promise<number> {
 *   const d = await limiter.limit(apiKey);
 *   return d.allowed ? 200 : 429;
 * }
 * ```
 * @public
 */
export interface Limiter {
  /**
   * Charges `cost` (default 1) if every policy admits it: a number charges every policy, a
   * record charges each policy by name (`Cost`).
   */
  limit(identity: string, options?: { cost?: Cost }): Promise<Decision>;
  /**
   * Admits against an estimate (`cost`) as `limit` does, and returns the decision with `settle`
   * and `cancel` to correct the charge once the real cost is known (docs/ai.md). Every limiter
   * `createLimiter` makes has it (`ReservingLimiter`); optional here so that a `Limiter` written
   * by hand for 1.0 (a test's fake) still compiles.
   * @beta
   */
  reserve?(identity: string, options?: ReserveOptions): Promise<Reservation>;
  /** Charges nothing: remaining as it stands; `allowed` says whether one more unit would pass now. */
  peek(identity: string): Promise<Decision>;
  /** Forgets the identity in every policy, and lifts its blocks (`blockFor`). */
  reset(identity: string): Promise<void>;
  /**
   * Gives back `cost` units (default 1) that an admission charged, to every policy, atomically
   * and in one store round trip: for a request that should not count after all (an HTTP
   * response that failed or succeeded, a job that did nothing). It never gives back more than
   * the identity has charged in the policy's current window (each kind's rule is in
   * docs/algorithms.md), and leaves blocks (`blockFor`) as they are. A store failure rejects.
   * With `decision` (the admission's own), only what that admission charged is given back.
   */
  refund(identity: string, options?: RefundOptions): Promise<void>;
  /**
   * Waits for a turn: resolves with an admitted decision once every policy admits `cost` (after
   * sleeping a leaky bucket's `delayMs`: a resolved wait means go now). Waiters of one identity
   * in one process are served first in, first out, with one timer per identity; only the first
   * of them asks the store again when its wait is over. Rejects with `WAIT_TIMEOUT` as soon as a
   * denial says the turn comes after `maxWaitMs`, with `ABORTED` when `signal` aborts.
   */
  wait(identity: string, options: WaitOptions): Promise<Decision>;
  readonly policies: readonly Policy[];
  /**
   * True when the limiter never enforces a denial (`shadow: true`, or every policy shadowed): an
   * http middleware then sends no headers for it unless told to, and holds nothing.
   */
  readonly shadow?: boolean;
}

/**
 * A limiter with `reserve`, as `createLimiter` makes every one.
 * @example
 * ```ts
 * import { createLimiter, fixedWindow, type ReservingLimiter } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter: ReservingLimiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: fixedWindow({ limit: 90_000, window: '1m', name: 'tokens' }),
 * });
 * const r = await limiter.reserve('key_123', { cost: 4_096 });
 * if (r.allowed) await r.settle(1_733);
 * ```
 * @public
 */
export interface ReservingLimiter extends Limiter {
  /**
   * `Limiter.reserve`, always there.
   * @beta
   */
  reserve(identity: string, options?: ReserveOptions): Promise<Reservation>;
}
