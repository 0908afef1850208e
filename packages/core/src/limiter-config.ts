// Reading a limiter's options: the checks `createLimiter` runs before any store is touched, and
// the defaults that depend on the store.
import { checkBlockCache } from './cache-watch.js';
import { FloodgateError } from './errors.js';
import type { LimiterOptions } from './limiter-types.js';
import { checkOptions, type OptionNames } from './options.js';
import type { Store } from './store-types.js';
import type { Policy } from './types.js';

const OPTION_NAMES = {
  store: true,
  policy: true,
  prefix: true,
  onStoreError: true,
  timeoutMs: true,
  blockCache: true,
  onError: true,
  breaker: true,
  shadow: true,
  onDecision: true,
  telemetry: true,
  overrides: true,
  migrateKeys: true,
  writeFormat: true,
} as const satisfies OptionNames<LimiterOptions>;

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
    // Ids follow what a policy counts, not its limit: two policies of one kind over one window
    // (interval, period) would be one count, so they need names of their own.
    if (ids.has((p as Policy).id))
      throw new FloodgateError(
        'INVALID_POLICY',
        `duplicate policy ${(p as Policy).id}: two ${(p as Policy).kind} policies over the same window, interval or period share one count; give them distinct names`,
      );
    ids.add((p as Policy).id);
  }
  return Object.freeze(list.slice() as Policy[]);
}

export function validateOptions(options: LimiterOptions): void {
  if (typeof options !== 'object' || options === null)
    throw new FloodgateError('INVALID_OPTION', 'options required');
  checkOptions('', options, OPTION_NAMES);
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
  checkBlockCache(options.blockCache);
  if (options.onError !== undefined && typeof options.onError !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'onError must be a function');
  }
  if (options.shadow !== undefined && typeof options.shadow !== 'boolean') {
    throw new FloodgateError('INVALID_OPTION', 'shadow must be true or false');
  }
  if (options.onDecision !== undefined && typeof options.onDecision !== 'function') {
    throw new FloodgateError('INVALID_OPTION', 'onDecision must be a function');
  }
  const tm = options.telemetry as { bind?: unknown } | undefined | null;
  if (
    tm !== undefined &&
    (typeof tm !== 'object' || tm === null || typeof tm.bind !== 'function')
  ) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'telemetry must come from openTelemetry() or have bind()',
    );
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

function isStore(value: unknown): value is Store {
  const s = value as Partial<Store> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.evaluate === 'function' &&
    typeof s.reset === 'function'
  );
}

/**
 * The `migrateKeys` option: `'0.1'` to read and write the keys of 0.1 beside 1.0's
 * (policies/migrate.ts), undefined (or `false`) for none.
 */
export function migrateOption(options: LimiterOptions): '0.1' | undefined {
  const m = options.migrateKeys;
  if (m === undefined || m === false) return undefined;
  if (m !== '0.1') {
    throw new FloodgateError('INVALID_OPTION', "migrateKeys must be '0.1' or false");
  }
  return m;
}
