import { FloodgateError } from './errors.js';
import { checkOptions, type OptionNames } from './options.js';

/**
 * Where a circuit breaker stands.
 * @example
 * A state-change hook typed with it, for alerting.
 * ```ts
 * import type { FloodgateError } from '@floodgate/core';
 * import type { BreakerState } from '@floodgate/core/store';
 *
 * function alert(state: BreakerState, error?: FloodgateError): void {
 *   if (state === 'open') console.error('rate-limit store is failing', error?.code);
 * }
 * ```
 * @public
 */
export type BreakerState = 'closed' | 'open' | 'half-open';

/**
 * How the limiter's circuit breaker trips and recovers.
 * @example
 * A limiter's breaker tuned to open sooner and wait longer before probing.
 * ```ts
 * import { createLimiter, fixedWindow } from '@floodgate/core';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const limiter = createLimiter({
 *   store: new IoRedisStore(new Redis()),
 *   policy: fixedWindow({ limit: 100, window: '1m' }),
 *   breaker: { failures: 3, windowMs: 5_000, cooldownMs: 5_000, onStateChange: console.warn },
 * });
 * ```
 * @public
 */
export interface BreakerOptions {
  /** Store failures (errors or timeouts) within `windowMs` that open the breaker. @default 5 */
  failures?: number;
  /** The span in which `failures` must occur. @default 10_000 */
  windowMs?: number;
  /** How long an open breaker answers without the store before it lets a probe through. @default 1000 */
  cooldownMs?: number;
  /** Calls let through to the store at once while half-open; the rest keep the fallback. @default 1 */
  probes?: number;
  /** Told of every change of state, with the failure that opened it; for alerting. */
  onStateChange?: (state: BreakerState, error?: FloodgateError) => void;
}

const OPTION_NAMES = {
  failures: true,
  windowMs: true,
  cooldownMs: true,
  probes: true,
  onStateChange: true,
} as const satisfies OptionNames<BreakerOptions>;

function positiveInteger(value: unknown, name: string, fallback: number): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new FloodgateError('INVALID_OPTION', `breaker.${name} must be a positive integer`);
  }
  return value;
}

/**
 * A circuit breaker around the store: after `failures` failures within `windowMs` it opens, and
 * decisions go to `onStoreError` at once instead of each waiting for a timeout or adding a command
 * to a dead connection's queue. After `cooldownMs` it lets `probes` calls through (half-open);
 * one success closes it, one failure opens it for another cooldown. Time is `performance.now()`:
 * a store's injected clock (tests, `clock: 'client'`) must not stall or rush recovery.
 * @example
 * A store wrapper with a breaker of its own (as `ShardedStore` keeps one per shard).
 * ```ts
 * import { FloodgateError } from '@floodgate/core';
 * import { Breaker, type StoreCall } from '@floodgate/core/store';
 *
 * declare function send(call: StoreCall): Promise<void>;
 * const breaker = new Breaker({ failures: 5, cooldownMs: 1_000 });
 * async function guarded(call: StoreCall): Promise<void> {
 *   if (!breaker.admit()) throw new FloodgateError('STORE_UNAVAILABLE', 'circuit open');
 *   try {
 *     await send(call);
 *     breaker.success();
 *   } catch (cause) {
 *     breaker.failure(new FloodgateError('STORE_UNAVAILABLE', 'shard failed', { cause }));
 *     throw cause;
 *   }
 * }
 * ```
 * @public
 */
export class Breaker {
  readonly #failures: number;
  readonly #windowMs: number;
  readonly #cooldownMs: number;
  readonly #probes: number;
  readonly #onStateChange: BreakerOptions['onStateChange'];
  #state: BreakerState = 'closed';
  /** Times of the most recent failures, oldest first, at most `failures` of them. */
  #recent: number[] = [];
  #openUntil = 0;
  #probing = 0;

  constructor(options: BreakerOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new FloodgateError('INVALID_OPTION', 'breaker must be a boolean or an options object');
    }
    checkOptions('breaker', options, OPTION_NAMES);
    this.#failures = positiveInteger(options.failures, 'failures', 5);
    this.#windowMs = positiveInteger(options.windowMs, 'windowMs', 10_000);
    this.#cooldownMs = positiveInteger(options.cooldownMs, 'cooldownMs', 1000);
    this.#probes = positiveInteger(options.probes, 'probes', 1);
    if (options.onStateChange !== undefined && typeof options.onStateChange !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'breaker.onStateChange must be a function');
    }
    this.#onStateChange = options.onStateChange;
  }

  get state(): BreakerState {
    return this.#state;
  }

  /**
   * Whether this call may go to the store. A `true` in half-open takes a probe slot, which
   * `success`, `failure` or `release` gives back.
   */
  admit(): boolean {
    if (this.#state === 'closed') return true;
    if (this.#state === 'open') {
      if (performance.now() < this.#openUntil) return false;
      this.#move('half-open');
    }
    if (this.#probing >= this.#probes) return false;
    this.#probing++;
    return true;
  }

  /** The store answered. */
  success(): void {
    if (this.#state === 'closed') return;
    this.#probing = Math.max(0, this.#probing - 1);
    if (this.#state === 'half-open') {
      this.#recent = [];
      this.#probing = 0;
      this.#move('closed');
    }
  }

  /** The call ended without telling anything about the store (bad input): give the slot back. */
  release(): void {
    if (this.#state !== 'closed') this.#probing = Math.max(0, this.#probing - 1);
  }

  /** The store failed or timed out. */
  failure(error: FloodgateError): void {
    const now = performance.now();
    if (this.#state !== 'closed') {
      this.#probing = Math.max(0, this.#probing - 1);
      // A late failure of a call let through before the breaker opened must not extend it.
      if (this.#state === 'half-open') this.#open(now, error);
      return;
    }
    this.#recent.push(now);
    if (this.#recent.length > this.#failures) this.#recent.shift();
    if (this.#recent.length === this.#failures && now - this.#recent[0]! <= this.#windowMs) {
      this.#open(now, error);
    }
  }

  #open(now: number, error: FloodgateError): void {
    this.#openUntil = now + this.#cooldownMs;
    this.#probing = 0;
    this.#move('open', error);
  }

  #move(state: BreakerState, error?: FloodgateError): void {
    this.#state = state;
    this.#onStateChange?.(state, error);
  }
}
