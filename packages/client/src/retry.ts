import { type Attempt, runWithRetries } from './engine.js';
import { invalidOption } from './errors.js';
import { type RetryOptions, resolveOptions } from './options.js';

/**
 * Options of `retry`: the shared {@link RetryOptions} and which thrown errors are retried.
 * @example
 * ```ts
 * import { type RetryFnOptions, retry } from '@floodgate/client';
 *
 * declare function connect(): Promise<void>;
 * const options: RetryFnOptions = {
 *   retries: 5,
 *   shouldRetry: (error) => (error as { code?: unknown }).code === 'ECONNREFUSED',
 * };
 * await retry(connect, options);
 * ```
 * @public
 */
export interface RetryFnOptions extends RetryOptions {
  /**
   * Whether a thrown error is worth another attempt. A `RetryLater` is always retried.
   * @default () => true
   */
  readonly shouldRetry?: (error: unknown, attempt: number) => boolean;
}

/**
 * What `fn` is handed on each attempt.
 * @example
 * ```ts
 * import { type RetryContext, retry } from '@floodgate/client';
 *
 * async function loadReport({ attempt, signal }: RetryContext): Promise<unknown> {
 *   const res = await fetch(`https://api.example.com/report?attempt=${attempt}`, { signal });
 *   if (!res.ok) throw new Error(`HTTP ${res.status}`);
 *   return res.json();
 * }
 * const report = await retry(loadReport, { deadlineMs: 60_000 });
 * ```
 * @public
 */
export interface RetryContext {
  /** 1-based. */
  readonly attempt: number;
  /** Fires on the caller's abort and on the deadline; pass it to whatever `fn` waits on. */
  readonly signal: AbortSignal;
}

/** A `RetryLater` from any copy of this package or realm. */
function laterDelay(error: unknown): number | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { name, delayMs } = error as { name?: unknown; delayMs?: unknown };
  return name === 'RetryLater' && typeof delayMs === 'number' && delayMs >= 0 ? delayMs : undefined;
}

/**
 * Calls `fn` until it resolves, with backoff and jitter between attempts. To pass on a delay
 * the server gave, throw `new RetryLater(ms)` from `fn`: it is honoured like a `Retry-After`.
 * @example
 * ```ts
 * import { RetryLater, retry } from '@floodgate/client';
 *
 * declare const queue: {
 *   poll(options: { signal: AbortSignal }): Promise<{ busy: boolean; retryInMs: number; job: string }>;
 * };
 * const job = await retry(async ({ signal }) => {
 *   const res = await queue.poll({ signal });
 *   if (res.busy) throw new RetryLater(res.retryInMs);
 *   return res.job;
 * }, { retries: 5, deadlineMs: 30_000 });
 * ```
 * @public
 */
export async function retry<T>(
  fn: (context: RetryContext) => T | Promise<T>,
  options: RetryFnOptions = {},
): Promise<T> {
  if (typeof fn !== 'function') throw invalidOption('retry needs a function');
  const resolved = resolveOptions(options, 'retry');
  const shouldRetry = options.shouldRetry ?? (() => true);
  const attempt: Attempt<T> = async (n, signal) => {
    try {
      return { kind: 'done', value: await fn({ attempt: n, signal }) };
    } catch (error) {
      if (signal.aborted) throw error;
      const later = laterDelay(error);
      if (later !== undefined) {
        return {
          kind: 'retry',
          reason: 'retry-later',
          serverDelayMs: later,
          source: 'retry-later',
          error,
          giveUp: { error },
        };
      }
      if (!shouldRetry(error, n)) throw error;
      return { kind: 'retry', reason: 'error', error, giveUp: { error } };
    }
  };
  return runWithRetries(attempt, resolved);
}
