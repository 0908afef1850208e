import { JITTERS, type Jitter } from './backoff.js';
import { RetryBudget } from './budget.js';
import { invalidOption } from './errors.js';
import type { FetchRetryOptions } from './fetch.js';
import { checkNames } from './option-names.js';
import type { RetryFnOptions } from './retry.js';
import type { DelaySource } from './server-delay.js';

/**
 * Why an attempt is being retried.
 * @example
 * ```ts
 * import { type RetryReason, withRetry } from '@floodgate/client';
 *
 * const retries = new Map<RetryReason, number>();
 * const api = withRetry(fetch, {
 *   onRetry: ({ reason }) => void retries.set(reason, (retries.get(reason) ?? 0) + 1),
 * });
 * ```
 * @public
 */
export type RetryReason = 'status' | 'network-error' | 'error' | 'retry-later';

/**
 * What `onRetry` is told before each wait.
 * @example
 * ```ts
 * import { type RetryEvent, withRetry } from '@floodgate/client';
 *
 * function logRetry(event: RetryEvent): void {
 *   const status = event.response?.status ?? event.reason;
 *   console.warn(`attempt ${event.attempt}: ${status}; next in ${event.delayMs} ms (${event.source})`);
 * }
 * const api = withRetry(fetch, { onRetry: logRetry });
 * ```
 * @public
 */
export interface RetryEvent {
  /** The attempt that just failed, 1-based. */
  readonly attempt: number;
  /** The wait before the next attempt, jitter included, in ms. */
  readonly delayMs: number;
  readonly reason: RetryReason;
  /** Where the wait came from: a header, a `RetryLater`, or the backoff. */
  readonly source: DelaySource;
  /** The server's own delay before jitter, when it gave one. */
  readonly serverDelayMs: number | undefined;
  /** The refused response (`reason: 'status'`); its body is released after the hook returns. */
  readonly response: Response | undefined;
  /** The error that failed the attempt (`'network-error'`, `'error'`, `'retry-later'`). */
  readonly error: unknown;
}

/**
 * Options shared by `retry`, `withRetry` and `fetchWithRetry`.
 * @example
 * A patient caller: more retries, a bound on the whole, long server delays waited out.
 * ```ts
 * import { type RetryOptions, retry } from '@floodgate/client';
 *
 * declare function syncInventory(): Promise<void>;
 * const patient: RetryOptions = { retries: 8, deadlineMs: 120_000, onMaxDelay: 'clamp' };
 * await retry(syncInventory, patient);
 * ```
 * @public
 */
export interface RetryOptions {
  /**
   * Retries after the first attempt (so at most `retries + 1` attempts).
   * @default 3
   */
  readonly retries?: number;
  /**
   * The first backoff step, when the server gave no delay. Doubles per retry.
   * @default 200
   */
  readonly baseDelayMs?: number;
  /**
   * The largest backoff step (server delays are bounded by `maxDelayMs` instead).
   * @default 10_000
   */
  readonly maxBackoffMs?: number;
  /**
   * How backoff waits are randomised. Unless `'none'`, a server-given delay also gets up to
   * `maxServerJitterMs` added, never subtracted.
   * @default 'full'
   */
  readonly jitter?: Jitter;
  /**
   * The most jitter added on top of a server-given delay.
   * @default 1000
   */
  readonly maxServerJitterMs?: number;
  /**
   * The longest wait this caller accepts, server-given or paced. `Infinity` for no bound: waits
   * past a timer's 24.8 days are made in steps, never cut short.
   * @default 60_000
   */
  readonly maxDelayMs?: number;
  /**
   * A server delay beyond `maxDelayMs`: `'throw'` a `RetryDelayTooLongError`, or `'clamp'`
   * the wait to `maxDelayMs` and retry then (the server may well refuse again).
   * @default 'throw'
   */
  readonly onMaxDelay?: 'throw' | 'clamp';
  /**
   * Bounds all attempts and waits together, from the call; past it the call rejects with a
   * `RetryDeadlineError`, and a wait that would end past it is not started. Any length, up to
   * `Infinity` (the same as none).
   * @default undefined (no deadline)
   */
  readonly deadlineMs?: number;
  /**
   * Cancels the call, including a pending wait, at once; it rejects with the signal's reason.
   * For fetch, `init.signal` and a `Request`'s own signal are honoured too: any of them cancels.
   * @default undefined
   */
  readonly signal?: AbortSignal;
  /**
   * The retry budget to spend from, or `false` for none. `withRetry` creates one per instance
   * (10 tokens, 0.1 per success); `retry` and `fetchWithRetry` use one only when given.
   * @default a new RetryBudget per withRetry instance; none for one-off calls
   */
  readonly budget?: RetryBudget | false;
  /** Called before each wait; a returned promise is awaited. @default undefined */
  readonly onRetry?: (event: RetryEvent) => void | Promise<void>;
  /**
   * Uniform in [0, 1); injectable for tests.
   * @default Math.random
   */
  readonly random?: () => number;
}

export interface ResolvedOptions {
  readonly retries: number;
  readonly baseDelayMs: number;
  readonly maxBackoffMs: number;
  readonly jitter: Jitter;
  readonly maxServerJitterMs: number;
  readonly maxDelayMs: number;
  readonly onMaxDelay: 'throw' | 'clamp';
  readonly deadlineMs: number | undefined;
  readonly signal: AbortSignal | undefined;
  readonly budget: RetryBudget | undefined;
  readonly onRetry: ((event: RetryEvent) => void | Promise<void>) | undefined;
  readonly random: () => number;
}

// Each function's options beyond RetryOptions. The RetryOptions names themselves are the keys of
// ResolvedOptions, checked against them (the bundle carries no second list of them). The types
// below hold both to the options types: a name added to one and not the other fails to compile.
type Beyond<T> = Exclude<keyof T, keyof RetryOptions>;
type Lists<T, L extends readonly string[]> = [Beyond<T>, L[number]] extends [L[number], Beyond<T>]
  ? true
  : never;
type SameNames = [keyof RetryOptions, keyof ResolvedOptions] extends [
  keyof ResolvedOptions,
  keyof RetryOptions,
]
  ? true
  : never;
const FETCH = ['statuses', 'methods', 'pacing', 'serverDelay'] as const;
const RETRY_FN = ['shouldRetry'] as const;
const _checked: [
  SameNames,
  Lists<FetchRetryOptions, typeof FETCH>,
  Lists<RetryFnOptions, typeof RETRY_FN>,
] = [true, true, true];
const EXTRA: Record<'retry' | 'withRetry' | 'fetchWithRetry', readonly string[]> = {
  retry: RETRY_FN,
  withRetry: FETCH,
  fetchWithRetry: [...FETCH, 'fetch'],
};

// Names from other retry libraries (p-retry, async-retry, ky, got, SDKs' maxRetries) and the
// option that takes their place here, as `@floodgate/http` does for the server side's peers.
// A few only: the bundle has a size budget (README, "Size").
const PEERS: Readonly<Record<string, string>> = {
  maxRetries: 'retries',
  limit: 'retries',
  minTimeout: 'baseDelayMs',
  maxTimeout: 'maxBackoffMs',
  statusCodes: 'statuses',
  onFailedAttempt: 'onRetry',
};

/**
 * A duration option. Bounds (`maxDelayMs`, `maxBackoffMs`, `deadlineMs`) may be `Infinity`, for
 * none: waits of any length are made in steps a timer can hold (see sleep.ts). A step that is
 * itself a wait (`baseDelayMs`, `maxServerJitterMs`) must be finite: jitter multiplies it.
 */
function ms(name: string, value: number | undefined, fallback: number, bound = false): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !(value >= 0) || (!bound && value === Infinity)) {
    throw invalidOption(
      `${name} must be a ${bound ? 'non-negative' : 'finite, non-negative'} number of ms, got ${String(value)}`,
    );
  }
  return value;
}

/** Checks every option of `caller`'s once, before any request is made. */
export function resolveOptions(options: RetryOptions, caller: keyof typeof EXTRA): ResolvedOptions {
  const retries = options.retries ?? 3;
  if (!Number.isSafeInteger(retries) || retries < 0) {
    throw invalidOption(`retries must be a non-negative integer, got ${String(retries)}`);
  }
  const jitter = options.jitter ?? 'full';
  if (!JITTERS.includes(jitter)) throw invalidOption(`unknown jitter: ${String(jitter)}`);
  const onMaxDelay = options.onMaxDelay ?? 'throw';
  if (onMaxDelay !== 'throw' && onMaxDelay !== 'clamp') {
    throw invalidOption(`onMaxDelay must be 'throw' or 'clamp', got ${String(onMaxDelay)}`);
  }
  const budget = options.budget;
  if (budget !== undefined && budget !== false && !(budget instanceof RetryBudget)) {
    throw invalidOption('budget must be a RetryBudget (createRetryBudget) or false');
  }
  if (options.onRetry !== undefined && typeof options.onRetry !== 'function') {
    throw invalidOption('onRetry must be a function');
  }
  const resolved: ResolvedOptions = {
    retries,
    baseDelayMs: ms('baseDelayMs', options.baseDelayMs, 200),
    maxBackoffMs: ms('maxBackoffMs', options.maxBackoffMs, 10_000, true),
    jitter,
    maxServerJitterMs: ms('maxServerJitterMs', options.maxServerJitterMs, 1000),
    maxDelayMs: ms('maxDelayMs', options.maxDelayMs, 60_000, true),
    onMaxDelay,
    deadlineMs:
      options.deadlineMs === undefined ? undefined : ms('deadlineMs', options.deadlineMs, 0, true),
    signal: options.signal,
    budget: budget || undefined,
    onRetry: options.onRetry,
    random: options.random ?? Math.random,
  };
  // Unknown names last: a wrong value among known names is reported as it was before.
  checkNames(caller, options, EXTRA[caller], resolved, PEERS);
  return resolved;
}
