// The limiter's blocked-key cache and the store's change feed (`Store.watch`): building the
// cache from the `blockCache` option, subscribing it to the feed so that a reset (or override)
// made by any process drops its entry, and the hook that drops an entry from outside limiter.ts.
import { BlockedCache } from './blocked-cache.js';
import { FloodgateError } from './errors.js';
import type { BlockCacheOptions } from './limiter-types.js';
import type { Store, StoreChange } from './store-types.js';

const DEFAULT_MAX = 10_000;
/**
 * Long enough that a hot denied identity costs one store call per second per process while the
 * feed is down; short enough that a reset the feed missed (or a store without one) is seen
 * within a second.
 */
export const DEFAULT_MAX_STALE_MS = 1000;

/** Checks `blockCache` (with the other options, before any store is touched). */
export function checkBlockCache(value: unknown): void {
  if (value === undefined || typeof value === 'boolean') return;
  const o = value as { max?: unknown; maxStaleMs?: unknown } | null;
  const whole = (x: unknown, min: number) =>
    x === undefined || (typeof x === 'number' && Number.isSafeInteger(x) && x >= min);
  if (
    typeof o !== 'object' ||
    o === null ||
    Object.keys(o).some((k) => k !== 'max' && k !== 'maxStaleMs') ||
    Object.keys(o).length === 0 ||
    !whole(o.max, 1) ||
    !whole(o.maxStaleMs, 0)
  ) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'blockCache must be a boolean or { max, maxStaleMs } (either or both; max ≥ 1, maxStaleMs ≥ 0)',
    );
  }
}

/**
 * The limiter's blocked-key cache (on by default for remote stores), listening to the store's
 * change feed when it has one. `clock` is the limiter's: the one entries are timed with.
 */
export function blockedCacheFor(
  option: boolean | BlockCacheOptions | undefined,
  store: Store,
  prefix: string,
  clock: () => number,
): BlockedCache | undefined {
  const on = option ?? store.remote === true;
  if (on === false) return undefined;
  const o: BlockCacheOptions = on === true ? {} : on;
  const cache = new BlockedCache(o.max ?? DEFAULT_MAX, o.maxStaleMs ?? DEFAULT_MAX_STALE_MS);
  if (typeof store.watch === 'function') watchChanges(store, cache, prefix, clock);
  return cache;
}

// Unwatches the feed once a cache is collected: a limiter made per request (docs/http.md, limits
// per request) and dropped must not stay reachable from its store through its listener. Made at
// first use, not at import: an edge runtime may restrict what runs at a module's top level.
let unwatchOnCollect: FinalizationRegistry<() => void> | undefined;
function registry(): FinalizationRegistry<() => void> | undefined {
  if (unwatchOnCollect === undefined && typeof FinalizationRegistry === 'function') {
    unwatchOnCollect = new FinalizationRegistry((stop) => stop());
  }
  return unwatchOnCollect;
}

/** Feeds the store's changes to the cache, holding the cache weakly (runtimes with WeakRef). */
function watchChanges(
  store: Store,
  cache: BlockedCache,
  prefix: string,
  clock: () => number,
): void {
  const ref: { deref(): BlockedCache | undefined } =
    typeof WeakRef === 'function' ? new WeakRef(cache) : { deref: () => cache };
  let stop: (() => void) | undefined;
  const listener = (change: StoreChange): void => {
    const c = ref.deref();
    if (c === undefined) {
      stop?.();
      return;
    }
    switch (change.type) {
      case 'identity':
        if (change.prefix === prefix) c.invalidate(change.identity);
        return;
      case 'alive':
        c.alive(clock());
        return;
      case 'down':
        c.down();
        return;
      case 'missed':
        c.missed();
        return;
    }
  };
  try {
    stop = store.watch!(listener);
  } catch {
    // A store whose feed cannot start: the cache keeps to its staleness bound.
    return;
  }
  if (typeof stop === 'function') registry()?.register(cache, stop);
}

const hooks = new WeakMap<object, (identity: string) => void>();

/** Lets `invalidateCached` reach this limiter's cache (limiter.ts, on the limiter it returns). */
export function exposeInvalidation<L extends object>(
  limiter: L,
  drop: (identity: string) => void,
): L {
  hooks.set(limiter, drop);
  return limiter;
}

/**
 * Drops the cached denial of `identity` in `limiter` and voids its denials in flight, as a reset
 * does: for code outside the limiter that changed the identity's state (an override set or
 * cleared, a helper of this repo's packages). False when the limiter has no blocked-key cache
 * (or is not one `createLimiter` made). Other processes hear of a change through the store.
 * @internal
 * @example
 * ```ts
 * import { createLimiter, fixedWindow } from '@floodgate/core';
 * import { invalidateCached } from '@floodgate/core/internal';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const limiter = createLimiter({
 *   store: new IoRedisStore(new Redis()),
 *   policy: fixedWindow({ limit: 5, window: '1m' }),
 * });
 * invalidateCached(limiter, 'user_42'); // true: its next decision asks Redis
 * ```
 */
export function invalidateCached(limiter: object, identity: string): boolean {
  const drop = hooks.get(limiter);
  if (drop === undefined) return false;
  drop(identity);
  return true;
}
