import type { BreakerOptions } from './breaker.js';
import { FloodgateError, isFloodgateError } from './errors.js';
import type { Store } from './store.js';
import type { Decision, Policy } from './types.js';

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
   * failure); a script that reaches Redis after that charges nothing. `false`: wait as long as the
   * store does (a Redis client may queue a command for a minute or more while it reconnects).
   * @default 250 for remote stores (`store.remote`), none for in-process ones
   */
  timeoutMs?: number | false;
  /**
   * Answer denied identities in-process until their `retryAfterMs` has passed, with no store
   * round trip. `max` bounds the entries. @default on (max 10 000) for remote stores, off otherwise
   */
  blockCache?: boolean | { max: number };
  /** Called with every store failure the limiter absorbed, so it can be alerted on. */
  onError?: (error: FloodgateError) => void;
  /**
   * A circuit breaker around the store (see `BreakerOptions`): once the store keeps failing,
   * decisions go to `onStoreError` at once instead of each waiting on a dead store.
   * @default on for remote stores (5 failures in 10 s open it for 1 s, then 1 probe), off otherwise
   * and off for a store that `isolatesFailures` (it breaks per part, e.g. per shard)
   */
  breaker?: boolean | BreakerOptions;
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
 */
export interface Limiter {
  /** Charges `cost` (default 1) if every policy admits it. */
  limit(identity: string, options?: { cost?: number }): Promise<Decision>;
  /** Charges nothing: remaining as it stands; `allowed` says whether one more unit would pass now. */
  peek(identity: string): Promise<Decision>;
  /** Forgets the identity in every policy. */
  reset(identity: string): Promise<void>;
  readonly policies: readonly Policy[];
}

const OPTION_NAMES = [
  'store',
  'policy',
  'prefix',
  'onStoreError',
  'timeoutMs',
  'blockCache',
  'onError',
  'breaker',
];

export function validatePolicies(policy: unknown): readonly Policy[] {
  const list = (Array.isArray(policy) ? policy : [policy]) as unknown[];
  if (list.length === 0)
    throw new FloodgateError('INVALID_POLICY', 'at least one policy is required');
  const ids = new Set<string>();
  for (const p of list) {
    if (
      typeof p !== 'object' ||
      p === null ||
      typeof (p as Policy).id !== 'string' ||
      !Array.isArray((p as Policy).params)
    ) {
      throw new FloodgateError(
        'INVALID_POLICY',
        'policy must come from a factory such as tokenBucket({...})',
      );
    }
    if (ids.has((p as Policy).id))
      throw new FloodgateError('INVALID_POLICY', `duplicate policy ${(p as Policy).id}`);
    ids.add((p as Policy).id);
  }
  return Object.freeze(list.slice() as Policy[]);
}

export function validateOptions(options: LimiterOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new FloodgateError('INVALID_OPTION', 'options required');
  for (const key of Object.keys(options)) {
    if (!OPTION_NAMES.includes(key))
      throw new FloodgateError('INVALID_OPTION', `unknown option "${key}"`);
  }
  if (!isStore(options.store)) {
    throw new FloodgateError('INVALID_OPTION', 'store must implement evaluate() and reset()');
  }
  const t = options.timeoutMs;
  if (t !== undefined && t !== false && (!Number.isSafeInteger(t) || t <= 0)) {
    throw new FloodgateError('INVALID_OPTION', 'timeoutMs must be a positive integer or false');
  }
  // Checked here, not at the first store failure: a typo such as 'alow' must not wait for an
  // outage to surface as a TypeError.
  const e = options.onStoreError as unknown;
  if (e !== undefined && e !== 'throw' && e !== 'allow' && e !== 'deny' && !isStore(e)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      "onStoreError must be 'throw', 'allow', 'deny' or a store",
    );
  }
  const b = options.blockCache as unknown;
  const max = (b as { max?: unknown } | null)?.max;
  if (
    b !== undefined &&
    typeof b !== 'boolean' &&
    (typeof b !== 'object' || typeof max !== 'number' || !Number.isSafeInteger(max) || max <= 0)
  ) {
    throw new FloodgateError('INVALID_OPTION', 'blockCache must be a boolean or { max: n }, n ≥ 1');
  }
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'onError must be a function');
  }
  const br = options.breaker as unknown;
  if (br !== undefined && typeof br !== 'boolean' && (typeof br !== 'object' || br === null)) {
    throw new FloodgateError('INVALID_OPTION', 'breaker must be a boolean or an options object');
  }
}

/**
 * The `timeoutMs` of a remote store's limiter unless set. A Redis client queues commands while it
 * reconnects (ioredis retries each up to 20 times: over a minute); without a bound every request
 * waited that long during an outage, and failures came too far apart to open the breaker.
 */
export const DEFAULT_REMOTE_TIMEOUT_MS = 250;

/** The limiter's store timeout in ms, or undefined for none. */
export function timeoutOf(options: LimiterOptions): number | undefined {
  const t = options.timeoutMs;
  if (t === false) return undefined;
  return t ?? (options.store.remote === true ? DEFAULT_REMOTE_TIMEOUT_MS : undefined);
}

/** Errors about the caller's input or configuration: they reach the caller, never the fallback. */
export function isCallerError(error: unknown): boolean {
  return (
    isFloodgateError(error) &&
    (error.code.startsWith('INVALID_') || error.code === 'COST_EXCEEDS_CAPACITY')
  );
}

export function storeError(cause: unknown): FloodgateError {
  return isFloodgateError(cause) &&
    (cause.code === 'STORE_TIMEOUT' || cause.code === 'STORE_UNAVAILABLE')
    ? cause
    : new FloodgateError('STORE_UNAVAILABLE', 'the store failed', { cause });
}

function isStore(value: unknown): value is Store {
  const s = value as Partial<Store> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.evaluate === 'function' &&
    typeof s.reset === 'function'
  );
}
