import {
  createLimiter,
  type Decision,
  type FloodgateErrorCode,
  isFloodgateError,
  type Limiter,
  type Policy,
  type ReservingLimiter,
} from '@floodgate/core';
import { encodeIdentity, policyKey, type Store, type StoreCall } from '@floodgate/core/store';
import type { ConformanceOptions, Expectation, StoreInspector, TestApi } from './types.js';

/** 19 675 days after the epoch: aligned to every window that divides a day. */
export const BASE = 1_699_920_000_000;
export const DAY = 86_400_000;

/** One test's world: its store, its clock, its prefix. */
export interface Run<S extends Store = Store> {
  readonly store: S;
  readonly prefix: string;
  /** Store calls the suite's limiters made (through a transparent wrapper). */
  readonly calls: { evaluate: number; reset: number };
  /** The counting wrapper around `store` that the suite's limiters use. */
  readonly spy: Store;
  /** The time `ctx.now()` returns. */
  now: number;
  /** Sets the clock to `BASE + offset`. */
  at(offset: number): void;
  advance(ms: number): void;
  /** A limiter on this test's store: no blocked-key cache, store errors thrown. */
  limiter(policy: Policy | readonly Policy[], prefix?: string): ReservingLimiter;
  /** The key a policy of an identity lives under: `<prefix>:{<encoded identity>}:<policy id>`. */
  key(identity: string, policy: Policy, prefix?: string): string;
  /** Keys the store holds under `prefix:` (default this test's), or undefined without `inspect.keys`. */
  liveKeys(prefix?: string): Promise<string[] | undefined>;
  /** The key's TTL through `inspect.ttl`, or undefined without an inspector. */
  ttl(key: string): Promise<number | undefined>;
}

/** What the assertion helpers need from a harness. */
export interface Checks {
  readonly expect: (actual: unknown, message?: string) => Expectation;
  readonly inspect: { readonly ttlSlackMs?: number } | undefined;
}

export interface Harness<S extends Store = Store> extends Checks {
  readonly api: TestApi;
  readonly controlsTime: boolean;
  readonly inspect: StoreInspector<S> | undefined;
  readonly numRuns: number;
  /** The store expires keys on real time (see `ConformanceOptions.realTimeExpiry`). */
  readonly realTimeExpiry: boolean;
  /** Stretches the durations of random traces: 100 with `realTimeExpiry`, else 1. */
  readonly scale: number;
  /** Stretches the semantics table: `ConformanceOptions.semanticsScale`, 1 unless given. */
  readonly semanticsScale: number;
  /** Registers a test that gets a fresh store. */
  test(name: string, body: (run: Run<S>) => Promise<void>): void;
}

let suites = 0;

export function makeHarness<S extends Store>(
  api: TestApi,
  options: ConformanceOptions<S>,
): Harness<S> {
  const runId = `fgc${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}${++suites}`;
  let tests = 0;
  const inspect = options.inspect;
  return {
    api,
    expect: (actual, message) => api.expect(actual, message),
    controlsTime: options.controlsTime ?? true,
    inspect,
    numRuns: options.numRuns ?? 40,
    realTimeExpiry: options.realTimeExpiry === true,
    scale: options.realTimeExpiry === true ? 100 : 1,
    semanticsScale: options.semanticsScale ?? 1,
    test(name, body) {
      api.it(
        name,
        async () => {
          const prefix = `${runId}t${++tests}`;
          const clock = { t: BASE };
          const store = await options.makeStore({ now: () => clock.t, prefix });
          const calls = { evaluate: 0, reset: 0 };
          const spy: Store = {
            evaluate(call: StoreCall) {
              calls.evaluate++;
              return store.evaluate(call);
            },
            reset(keys: readonly string[]) {
              calls.reset++;
              return store.reset(keys);
            },
            // The limiter reads the store's clock where it has one (a reservation's age).
            ...(store.now === undefined ? {} : { now: () => store.now!() }),
          };
          const run: Run<S> = {
            store,
            prefix,
            calls,
            spy,
            get now() {
              return clock.t;
            },
            set now(t: number) {
              clock.t = t;
            },
            at(offset) {
              clock.t = BASE + offset;
            },
            advance(ms) {
              clock.t += ms;
            },
            limiter: (policy, p = prefix) =>
              createLimiter({
                store: spy,
                policy,
                prefix: p,
                blockCache: false,
                onStoreError: 'throw',
              }),
            key: (identity, policy, p = prefix) =>
              policyKey(p, encodeIdentity(identity), policy.id),
            async liveKeys(p = prefix) {
              if (inspect?.keys === undefined) return undefined;
              const all = await inspect.keys(store);
              return all.filter((k) => k.startsWith(`${p}:`)).sort();
            },
            async ttl(key) {
              return inspect === undefined ? undefined : await inspect.ttl(key, store);
            },
          };
          try {
            await body(run);
          } finally {
            await options.disposeStore?.(store);
          }
        },
        options.timeoutMs ?? 60_000,
      );
    },
  };
}

/** The decision without its per-policy breakdown. */
export function fields(d: Decision): Record<string, unknown> {
  return {
    allowed: d.allowed,
    limit: d.limit,
    remaining: d.remaining,
    resetAfterMs: d.resetAfterMs,
    retryAfterMs: d.retryAfterMs,
    delayMs: d.delayMs,
  };
}

/** Asserts that `fn` throws (or rejects with) a FloodgateError with `code`. */
export async function expectCode(
  h: Checks,
  what: string,
  code: FloodgateErrorCode,
  fn: () => unknown,
): Promise<void> {
  let error: unknown;
  try {
    await fn();
  } catch (e) {
    error = e;
  }
  h.expect(isFloodgateError(error), `${what}: throws a FloodgateError`).toBe(true);
  h.expect((error as { code?: unknown }).code, `${what}: error code`).toBe(code);
}

/**
 * After an admitted `limit()`: every policy's key exists with a TTL equal to that policy's
 * `resetAfterMs` (less `ttlSlackMs` for stores whose TTLs run on real time).
 */
export async function expectTtls(
  h: Checks,
  run: Run,
  limiter: Limiter,
  identity: string,
  d: Decision,
  prefix?: string,
): Promise<void> {
  if (h.inspect === undefined) return;
  const slack = h.inspect.ttlSlackMs ?? 0;
  // On a real clock the TTLs run down while they are read: under load, reading them can take
  // longer than the configured slack, so the time this check took is allowed on top of it.
  const started = Date.now();
  // Beside enforced policies, shadowed ones are reported apart (`shadowed`), and written only
  // when every policy admitted (no `shadowDenied`).
  let e = 0;
  let s = 0;
  for (let i = 0; i < limiter.policies.length; i++) {
    const p = limiter.policies[i]!;
    const apart = d.shadowed !== undefined && p.shadow === true;
    const part = apart ? d.shadowed![s++]! : d.policies[e++]!;
    if (apart && d.shadowDenied === true) continue;
    const expected = part.resetAfterMs;
    const ttl = await run.ttl(run.key(identity, p, prefix));
    const what = `TTL of ${p.id} for ${JSON.stringify(identity.slice(0, 40))} (resetAfterMs ${expected})`;
    h.expect(expected, `${what}: a written key has something to expire`).toBeGreaterThanOrEqual(1);
    if (slack === 0) {
      h.expect(ttl, what).toBe(expected);
    } else if (ttl === undefined) {
      // A TTL running on real time may already have run out, if it was that short.
      h.expect(expected, `${what}: the key is gone`).toBeLessThanOrEqual(slack);
    } else {
      h.expect(ttl, what).toBeLessThanOrEqual(expected);
      h.expect(ttl, what).toBeGreaterThanOrEqual(expected - slack - (Date.now() - started));
    }
  }
}

/** The keys of these identities under these policies do not exist. */
export async function expectAbsent(
  h: Checks,
  run: Run,
  identities: readonly string[],
  policies: readonly Policy[],
  prefix?: string,
): Promise<void> {
  if (h.inspect === undefined) return;
  for (const id of identities) {
    for (const p of policies) {
      const ttl = await run.ttl(run.key(id, p, prefix));
      h.expect(ttl, `key of ${p.id} for ${JSON.stringify(id.slice(0, 40))} exists`).toBe(undefined);
    }
  }
}

/** No store call was made and, when the store can list keys, nothing lives under the prefix. */
export async function expectUntouched(h: Checks, run: Run, what: string): Promise<void> {
  h.expect(run.calls, `${what}: store calls`).toEqual({ evaluate: 0, reset: 0 });
  const keys = await run.liveKeys();
  if (keys !== undefined) h.expect(keys, `${what}: keys written`).toEqual([]);
}
