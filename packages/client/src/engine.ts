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
  // The deadline aborts `internal`; attempts and waits listen to it combined with the caller's
  // signal, which keeps reaching a returned response's body after the call, as with fetch.
  const internal = new AbortController();
  if (o.signal?.aborted) throw abortReason(o.signal);
  const signal = o.signal ? anySignal(o.signal, internal.signal) : internal.signal;
  let attempt = 0;
  let lastResponse: Response | undefined;
  const deadlineTimer =
    o.deadlineMs === undefined
      ? undefined
      : setTimeout(() => {
          internal.abort(
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
        outcome = await run(attempt, signal);
      } catch (error) {
        // An aborted attempt rejects with whatever the fetch implementation chose; the
        // signal's reason says what really happened (caller abort or deadline).
        throw signal.aborted ? abortReason(signal) : error;
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
      await sleep(delayMs, signal);
    }
  } finally {
    if (deadlineTimer !== undefined) clearTimeout(deadlineTimer);
  }
}

/**
 * Aborts when either signal does. `AbortSignal.any` (Node 20.3+, current browsers) holds its
 * sources weakly; older runtimes get a plain listener.
 */
function anySignal(a: AbortSignal, b: AbortSignal): AbortSignal {
  const any = (AbortSignal as { any?: (signals: AbortSignal[]) => AbortSignal }).any;
  if (typeof any === 'function') return any.call(AbortSignal, [a, b]);
  const combined = new AbortController();
  for (const s of [a, b]) {
    s.addEventListener('abort', () => combined.abort(abortReason(s)), { once: true });
  }
  return combined.signal;
}
