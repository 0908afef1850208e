import { backoffDelay, serverJitter } from './backoff.js';
import { RetryDeadlineError, RetryDelayTooLongError } from './errors.js';
import type { ResolvedOptions, RetryReason } from './options.js';
import type { DelaySource } from './server-delay.js';
import { abortReason, sleep } from './sleep.js';

/** What one attempt came to. */
export type Outcome<T> =
  | { readonly kind: 'done'; readonly value: T }
  | {
      readonly kind: 'retry';
      readonly reason: RetryReason;
      /** The server's delay, when it gave one. */
      readonly serverDelayMs?: number;
      readonly source?: DelaySource;
      readonly response?: Response;
      readonly error?: unknown;
      /** What the call answers if no retry is made: a value, or `error` is thrown. */
      readonly giveUp: { readonly value: T } | { readonly error: unknown };
      /** Frees what the attempt holds (a response body) once it will not be returned. */
      readonly release?: () => Promise<void>;
    };

/** One attempt; `signal` fires on the caller's abort and on the deadline. */
export type Attempt<T> = (attempt: number, signal: AbortSignal) => Promise<Outcome<T>>;

/** The retry loop shared by `retry` and the fetch wrappers. */
export async function runWithRetries<T>(run: Attempt<T>, o: ResolvedOptions): Promise<T> {
  const started = Date.now();
  const deadline = o.deadlineMs === undefined ? Number.POSITIVE_INFINITY : started + o.deadlineMs;
  const controller = new AbortController();
  let attempt = 0;
  let lastResponse: Response | undefined;

  const onCallerAbort = (): void => controller.abort(abortReason(o.signal as AbortSignal));
  if (o.signal?.aborted) throw abortReason(o.signal);
  o.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const deadlineTimer =
    o.deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          controller.abort(
            new RetryDeadlineError({
              delayMs: 0,
              deadlineMs: o.deadlineMs as number,
              attempt,
              response: lastResponse,
            }),
          );
        }, o.deadlineMs);

  try {
    let previousBackoff = o.baseDelayMs;
    for (;;) {
      attempt += 1;
      let outcome: Outcome<T>;
      try {
        outcome = await run(attempt, controller.signal);
      } catch (error) {
        // An aborted attempt rejects with whatever the fetch implementation chose; the
        // signal's reason says what really happened (caller abort or deadline).
        throw controller.signal.aborted ? controller.signal.reason : error;
      }
      if (outcome.kind === 'done') {
        o.budget?.succeed();
        return outcome.value;
      }
      lastResponse = outcome.response;
      const giveUp = (): T => {
        if ('value' in outcome.giveUp) return outcome.giveUp.value;
        throw outcome.giveUp.error;
      };
      if (attempt > o.retries) return giveUp();

      let delayMs: number;
      let source: DelaySource;
      if (outcome.serverDelayMs !== undefined) {
        let server = outcome.serverDelayMs;
        if (server > o.maxDelayMs) {
          if (o.onMaxDelay === 'throw') {
            throw new RetryDelayTooLongError({
              delayMs: server,
              maxDelayMs: o.maxDelayMs,
              attempt,
              response: outcome.response,
              cause: outcome.error,
            });
          }
          server = o.maxDelayMs;
        }
        const extra = serverJitter(o.jitter, o.maxServerJitterMs, o.random);
        delayMs = Math.max(server, Math.min(server + extra, o.maxDelayMs));
        source = outcome.source ?? 'retry-later';
      } else {
        delayMs = backoffDelay({
          jitter: o.jitter,
          baseDelayMs: o.baseDelayMs,
          maxBackoffMs: o.maxBackoffMs,
          retry: attempt,
          previousMs: previousBackoff,
          random: o.random,
        });
        previousBackoff = Math.max(delayMs, o.baseDelayMs);
        source = 'backoff';
      }

      if (Date.now() + delayMs > deadline) {
        throw new RetryDeadlineError({
          delayMs,
          deadlineMs: o.deadlineMs as number,
          attempt,
          response: outcome.response,
          cause: outcome.error,
        });
      }
      // Last check, so a retry that is not made for another reason spends no token.
      if (o.budget && !o.budget.tryRetry()) return giveUp();

      await o.onRetry?.({
        attempt,
        delayMs,
        reason: outcome.reason,
        source,
        serverDelayMs: outcome.serverDelayMs,
        response: outcome.response,
        error: outcome.error,
      });
      await outcome.release?.();
      await sleep(delayMs, controller.signal);
    }
  } finally {
    if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
    o.signal?.removeEventListener('abort', onCallerAbort);
  }
}
