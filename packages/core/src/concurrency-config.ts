// Reading a concurrency limiter's options: every check `createConcurrencyLimiter` runs before
// any store is touched, and the defaults that depend on the store, as limiter-config.ts does
// for rate limits (the same defaults: a remote store gets a timeout, a breaker and its
// in-process fallback).
import type { BreakerOptions } from './breaker.js';
import { durationOption } from './concurrency-lease.js';
import type { ConcurrencyLimiterOptions } from './concurrency-types.js';
import { FloodgateError } from './errors.js';
import { validatePrefix } from './keys.js';
import { isLeaseStore, type LeaseStore } from './lease-types.js';
import { DEFAULT_REMOTE_TIMEOUT_MS } from './limiter-config.js';
import { checkOptions, type OptionNames } from './options.js';

const OPTION_NAMES = {
  store: true,
  limit: true,
  leaseMs: true,
  prefix: true,
  timeoutMs: true,
  onStoreError: true,
  onError: true,
  breaker: true,
  onDecision: true,
  telemetry: true,
} as const satisfies OptionNames<ConcurrencyLimiterOptions>;

/** The options, checked, with the store-dependent defaults applied. */
export interface ConcurrencyConfig {
  readonly store: LeaseStore;
  readonly limit: number;
  readonly leaseMs: number;
  readonly prefix: string;
  readonly timeoutMs: number | undefined;
  readonly onStoreError: 'throw' | 'allow' | 'deny' | LeaseStore;
  /** Undefined: no breaker. */
  readonly breaker: BreakerOptions | undefined;
}

const invalid = (message: string): FloodgateError =>
  new FloodgateError('INVALID_OPTION', `createConcurrencyLimiter: ${message}`);

function isStoreLike(value: unknown): value is LeaseStore {
  return typeof value === 'object' && value !== null && isLeaseStore(value);
}

/** The store's own fallback when it has one that can hold leases (a remote store's MemoryStore). */
function defaultFallback(store: LeaseStore): LeaseStore | 'throw' {
  const make = (store as { fallback?: unknown }).fallback;
  if (typeof make !== 'function') return 'throw';
  const fallback: unknown = make.call(store);
  return isStoreLike(fallback) ? fallback : 'throw';
}

function checkHooks(options: ConcurrencyLimiterOptions): void {
  for (const name of ['onError', 'onDecision'] as const) {
    if (options[name] !== undefined && typeof options[name] !== 'function') {
      throw invalid(`${name} must be a function`);
    }
  }
  const tm = options.telemetry as { bind?: unknown } | undefined | null;
  if (
    tm !== undefined &&
    (typeof tm !== 'object' || tm === null || typeof tm.bind !== 'function')
  ) {
    throw invalid('telemetry must come from openTelemetry() or have bind()');
  }
}

export function readConcurrencyOptions(options: ConcurrencyLimiterOptions): ConcurrencyConfig {
  if (typeof options !== 'object' || options === null) throw invalid('options must be an object');
  checkOptions('createConcurrencyLimiter', options, OPTION_NAMES);
  const { store, limit } = options;
  if (!isStoreLike(store)) {
    throw invalid('store must implement acquireLease, releaseLease and extendLease');
  }
  if (!Number.isSafeInteger(limit) || limit <= 0) throw invalid('limit must be a positive integer');
  const leaseMs = durationOption(options.leaseMs, 'createConcurrencyLimiter: leaseMs');
  const prefix = options.prefix ?? 'floodgate';
  validatePrefix(prefix);
  const t = options.timeoutMs;
  if (t !== undefined && t !== false && (!Number.isSafeInteger(t) || t <= 0)) {
    throw new FloodgateError('INVALID_OPTION', 'timeoutMs must be a positive integer or false');
  }
  // Checked here, not at the first store failure: a typo such as 'alow' must not wait for an
  // outage to surface.
  const e = options.onStoreError as unknown;
  if (e !== undefined && e !== 'throw' && e !== 'allow' && e !== 'deny' && !isStoreLike(e)) {
    throw invalid("onStoreError must be 'throw', 'allow', 'deny' or a store that holds leases");
  }
  checkHooks(options);
  const br = options.breaker as unknown;
  if (br !== undefined && typeof br !== 'boolean' && (typeof br !== 'object' || br === null)) {
    throw invalid('breaker must be a boolean or an options object');
  }
  const { remote, isolatesFailures } = store as { remote?: unknown; isolatesFailures?: unknown };
  const on = options.breaker ?? (remote === true && isolatesFailures !== true);
  return {
    store,
    limit,
    leaseMs,
    prefix,
    timeoutMs:
      t === false ? undefined : (t ?? (remote === true ? DEFAULT_REMOTE_TIMEOUT_MS : undefined)),
    onStoreError: options.onStoreError ?? defaultFallback(store),
    breaker: on === false ? undefined : on === true ? {} : on,
  };
}
