import { FloodgateError } from '@floodgate/core';
import { checkOptions, type OptionNames } from '@floodgate/core/internal';
import { partBytes } from './keys.js';

/**
 * Options of `DenoKvStore`: where its keys live, how often a decision retries a conflicting
 * commit, how long it waits out a locked file, its clock, and how long KV keeps a key past its
 * state's end.
 * @example
 * A store under its own root, on a clock a test moves by hand.
 * ```ts
 * import { DenoKvStore, type DenoKvLike, type DenoKvStoreOptions } from '@floodgate/deno-kv';
 *
 * declare const kv: DenoKvLike;
 * let now = 1_700_000_000_000;
 * const options: DenoKvStoreOptions = { root: ['myapp', 'limits'], maxRetries: 32, now: () => now };
 * const store = new DenoKvStore(kv, options);
 * now += 60_000; // a minute passes for the store
 * ```
 * @public
 */
export interface DenoKvStoreOptions {
  /**
   * The key parts every Floodgate key is stored under: a Floodgate key `k` is the Deno KV key
   * `[...root, k]`. At least one part, so the store's keys never mix with the app's own.
   * @default ['floodgate']
   */
  root?: readonly string[];
  /**
   * How many times one call reads, decides and commits again after a commit failed its check
   * (another writer changed one of its keys in between). Past that it rejects with
   * `STORE_UNAVAILABLE` (the limiter's `onStoreError` then decides). Every retry costs one more
   * read and one more commit, and from the second a growing random pause (README, "Retries":
   * the measured cost; with the limiter's default `timeoutMs` of 250 ms, that usually ends a
   * call first).
   * @default 16
   */
  maxRetries?: number;
  /**
   * How long one call keeps trying while a local SQLite database file is locked by another
   * process sharing it (Deno KV answers "database is locked" at once, having written nothing).
   * Never past the limiter's `timeoutMs`. Irrelevant on Deno Deploy and for one process.
   * @default 5_000
   */
  busyTimeoutMs?: number;
  /**
   * The clock decisions are made on, in integer ms. Deno KV has no clock of its own to offer, so
   * by default it is this process's: hosts whose clocks disagree bend a limit by their skew.
   * Inject one for deterministic tests. @default Date.now
   */
  now?: () => number;
  /**
   * How long Deno KV keeps a key after its state has ended on the store's clock. A state's end
   * is stored in its value and checked on every read, so this only bounds how early KV's own
   * expiry (on the writer's clock, run lazily) may delete a state that is still live for a
   * reader whose clock is behind: keep it above the clock skew between your hosts.
   * @default 60_000
   */
  expiryMarginMs?: number;
}

const OPTION_NAMES = {
  root: true,
  maxRetries: true,
  busyTimeoutMs: true,
  now: true,
  expiryMarginMs: true,
} as const satisfies OptionNames<DenoKvStoreOptions>;

/** The options with their defaults, checked. */
export interface Settings {
  readonly root: readonly string[];
  readonly maxRetries: number;
  readonly busyTimeoutMs: number;
  readonly now: () => number;
  readonly marginMs: number;
}

function invalid(message: string): FloodgateError {
  return new FloodgateError('INVALID_OPTION', `DenoKvStore: ${message}`);
}

export function readOptions(options: DenoKvStoreOptions): Settings {
  if (typeof options !== 'object' || options === null) throw invalid('options must be an object');
  checkOptions('DenoKvStore', options, OPTION_NAMES);
  const root = options.root ?? ['floodgate'];
  if (
    !Array.isArray(root) ||
    root.length === 0 ||
    !root.every((p) => typeof p === 'string') ||
    root.reduce((sum, p: string) => sum + partBytes(p), 0) > 1024
  ) {
    throw invalid('root must be a non-empty array of strings, at most 1 KiB serialized');
  }
  const maxRetries = options.maxRetries ?? 16;
  if (!Number.isSafeInteger(maxRetries) || maxRetries < 0 || maxRetries > 1000) {
    throw invalid('maxRetries must be an integer from 0 to 1000');
  }
  const busyTimeoutMs = options.busyTimeoutMs ?? 5_000;
  if (!Number.isSafeInteger(busyTimeoutMs) || busyTimeoutMs < 0) {
    throw invalid('busyTimeoutMs must be a non-negative integer');
  }
  if (options.now !== undefined && typeof options.now !== 'function') {
    throw invalid('now must be a function');
  }
  const marginMs = options.expiryMarginMs ?? 60_000;
  if (!Number.isSafeInteger(marginMs) || marginMs < 0) {
    throw invalid('expiryMarginMs must be a non-negative integer');
  }
  return { root: [...root], maxRetries, busyTimeoutMs, now: options.now ?? Date.now, marginMs };
}
