// The public types of the conformance suite, in a file of their own: the suite (conformance.ts)
// and its harness (conformance/harness.ts) both read them, and neither imports the other back.
import type { Store } from '@floodgate/core/store';

/**
 * A value or a promise of it: what the suite's callbacks (`makeStore`, `ttl`, `teardown`) may
 * return.
 * @example
 * ```ts
 * import { MemoryStore } from '@floodgate/memory';
 * import type { Awaitable } from '@floodgate/testkit';
 *
 * // A store factory may answer at once or after some async setup.
 * const makeStore = (now: () => number): Awaitable<MemoryStore> => new MemoryStore({ now });
 * ```
 * @public
 */
export type Awaitable<T> = T | PromiseLike<T>;

/**
 * The assertions the suite uses: a subset that vitest's and jest's `expect` both provide, so
 * another runner needs only these four.
 * @example
 * ```ts
 * import assert from 'node:assert/strict';
 * import type { Expectation } from '@floodgate/testkit';
 *
 * // The suite's `expect` on node:assert, for a runner that has none.
 * const expect = (actual: unknown): Expectation => ({
 *   toBe: (expected) => assert.equal(actual, expected),
 *   toEqual: (expected) => assert.deepEqual(actual, expected),
 *   toBeGreaterThanOrEqual: (n) => assert.ok((actual as number) >= n),
 *   toBeLessThanOrEqual: (n) => assert.ok((actual as number) <= n),
 * });
 * ```
 * @public
 */
export interface Expectation {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeGreaterThanOrEqual(expected: number): void;
  toBeLessThanOrEqual(expected: number): void;
}

/**
 * The test framework, passed in by the caller (`import { describe, expect, it } from 'vitest'`),
 * so the testkit never imports a test runner itself.
 * @example
 * ```ts
 * import { MemoryStore } from '@floodgate/memory';
 * import { storeConformance, type TestApi } from '@floodgate/testkit';
 * import { afterAll, describe, expect, it } from 'vitest';
 *
 * const api: TestApi = { describe, it, expect, afterAll };
 * storeConformance(api, { name: 'MemoryStore', makeStore: ({ now }) => new MemoryStore({ now }) });
 * ```
 * @public
 */
export interface TestApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => Promise<void>, timeout?: number): void;
  expect(actual: unknown, message?: string): Expectation;
  /** Needed when `teardown` is given. */
  afterAll?(fn: () => Awaitable<void>): void;
}

/**
 * What `makeStore` gets for each test: the suite's clock and a prefix of its own.
 * @example
 * ```ts
 * import { MemoryStore } from '@floodgate/memory';
 * import type { StoreContext } from '@floodgate/testkit';
 *
 * // The store reads the suite's clock on every call, so the suite can travel in time.
 * const makeStore = ({ now }: StoreContext) => new MemoryStore({ now });
 * ```
 * @public
 */
export interface StoreContext {
  /**
   * The suite's clock in integer ms. A store that can take the caller's time (`MemoryStore`'s
   * `now`, a Redis store in `clock: 'client'` mode) must read it on every call.
   */
  readonly now: () => number;
  /**
   * Unique per test (and per suite run), without `{`, `}` or `:`. The suite uses it as the
   * limiter prefix, so tests on one shared Redis never see each other's keys.
   */
  readonly prefix: string;
}

/**
 * Lets the suite look inside a store, to check TTLs and that nothing else was written.
 * @example
 * ```ts
 * import type { MemoryStore } from '@floodgate/memory';
 * import type { StoreInspector } from '@floodgate/testkit';
 *
 * // MemoryStore runs on the suite's clock, so its TTLs are exact; it lists no keys.
 * const inspect: StoreInspector<MemoryStore> = { ttl: (key, store) => store.ttl(key) };
 * ```
 * @public
 */
export interface StoreInspector<S extends Store = Store> {
  /**
   * The key's remaining time to live in ms, or undefined when the key does not exist. A key that
   * exists without an expiry must be reported as -1 or Infinity (it then fails the TTL checks).
   * Redis: `PTTL` (mapping -2 to undefined). MemoryStore: `(key, store) => store.ttl(key)`.
   */
  ttl(key: string, store: S): Awaitable<number | undefined>;
  /**
   * Every key the store holds (the suite keeps those under the test's prefix). Redis: `SCAN`.
   * Optional: without it the suite checks only the keys it knows about, through `ttl`.
   */
  keys?(store: S): Awaitable<readonly string[]>;
  /**
   * How much a TTL may have run down between the decision and the `ttl` call: 0 for a store on
   * the suite's clock (MemoryStore); some ms for Redis, whose TTLs run on real time. @default 0
   */
  ttlSlackMs?: number;
}

/**
 * What `storeConformance` runs on: how to build the store for each test, whether the suite may
 * drive its clock, and how to look inside it.
 * @example
 * ```ts
 * import { MemoryStore } from '@floodgate/memory';
 * import { type ConformanceOptions, storeConformance } from '@floodgate/testkit';
 * import { describe, expect, it } from 'vitest';
 *
 * const options: ConformanceOptions<MemoryStore> = {
 *   name: 'MemoryStore',
 *   makeStore: ({ now }) => new MemoryStore({ now }),
 *   inspect: { ttl: (key, store) => store.ttl(key) },
 *   numRuns: 100, // more random traces than the default 40: a local store is fast
 * };
 * storeConformance({ describe, it, expect }, options);
 * ```
 * @public
 */
export interface ConformanceOptions<S extends Store = Store> {
  /** Shown as the top-level `describe`. */
  name: string;
  /** A fresh store for one test; it may be async. */
  makeStore(ctx: StoreContext): Awaitable<S>;
  /** Called after each test with the store `makeStore` returned (close a client, say). */
  disposeStore?(store: S): Awaitable<void>;
  /**
   * True when the store decides with `ctx.now` (MemoryStore, Redis `clock: 'client'`). False for
   * a store on its own clock (Redis `clock: 'server'`): then only the tests that need no time
   * travel are registered, plus one that checks the store agrees with real time. @default true
   */
  controlsTime?: boolean;
  /**
   * True when the store decides on `ctx.now` but expires keys on real time (Redis with
   * `clock: 'client'`: `PX` runs on the server's clock). A key written with a 2 ms TTL could then
   * vanish during the real milliseconds a trace spends on round trips while the suite's clock
   * stands still, and the store would rightly forget state the reference still holds. The suite
   * therefore stretches the windows, steps and start times of its random traces ×100 (durations
   * become 100 ms – 100 s), keeping every TTL far above a round trip. @default false
   */
  realTimeExpiry?: boolean;
  /**
   * With `realTimeExpiry`: stretches the semantics table (its windows, the times it calls at and
   * the durations it expects) by this factor, as `realTimeExpiry` stretches the random traces.
   * The table writes keys that expire 50 ms of real time later and must find them on the next
   * call; a store whose round trips can take longer (over HTTP, on a loaded machine) needs a
   * factor such as 100 (the shortest such TTL becomes 5 s). A whole divisor of 86 400, so the
   * table's windows stay aligned to its base time. The fractional-rate table is left as it is:
   * its point is whole-ms rounding, and its shortest TTL is 1 s. Only with `realTimeExpiry`.
   * @default 1
   */
  semanticsScale?: number;
  /** TTL and key-listing access; without it those checks are left out. */
  inspect?: StoreInspector<S>;
  /** Run once after the whole suite (through `api.afterAll`), e.g. to stop a server. */
  teardown?(): Awaitable<void>;
  /** fast-check runs per random-trace property. Keep modest on remote stores. @default 40 */
  numRuns?: number;
  /**
   * Runs the concurrency limiter's tests (the lease capability, `LeaseStore`), which fail on a
   * store without it. Every Floodgate store has it; set false for one that does not. @default true
   */
  concurrency?: boolean;
  /**
   * Runs the override tests (`limiter.override`, the `OverrideStore` capability), which fail on a
   * store without it. Every Floodgate store has it; set false for one that does not. @default true
   */
  overrides?: boolean;
  /** Per-test timeout in ms handed to `it`. @default 60_000 */
  timeoutMs?: number;
}
