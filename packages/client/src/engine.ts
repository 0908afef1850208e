import { backoffDelay, serverJitter } from './backoff.js';
import { RetryDeadlineError, RetryDelayTooLongError } from './errors.js';
import type { ResolvedOptions, RetryReason } from './options.js';
import type { DelaySource } from './server-delay.js';
import { abortReason, later, sleep } from './sleep.js';

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
      /** Thrown when a retry would be made but cannot be (a body that cannot be sent again). */
      readonly notRetried?: unknown;
    };

/**
 * One attempt; `signal` fires on any of the caller's signals and on the deadline, the local
 * time (ms) past which no wait may end (`Infinity` without one).
 */
export type Attempt<T> = (
  attempt: number,
  signal: AbortSignal,
  deadline: number,
) => Promise<Outcome<T>>;

/** Where a wait is decided: the attempt just made, and what it left. */
export interface WaitAt {
  readonly attempt: number;
  readonly response?: Response;
  readonly cause?: unknown;
}

/** A wait beyond `maxDelayMs`: thrown with `'throw'`, cut to `maxDelayMs` with `'clamp'`. */
export function boundedDelay(ms: number, o: ResolvedOptions, at: WaitAt): number {
  if (ms <= o.maxDelayMs) return ms;
  if (o.onMaxDelay === 'throw') {
    throw new RetryDelayTooLongError({ ...at, delayMs: ms, maxDelayMs: o.maxDelayMs });
  }
  return o.maxDelayMs;
}

/** A wait that would end past the deadline is not started. */
export function checkDeadline(ms: number, deadline: number, o: ResolvedOptions, at: WaitAt) {
  if (Date.now() + ms > deadline) {
    throw new RetryDeadlineError({ ...at, delayMs: ms, deadlineMs: o.deadlineMs as number });
  }
}

/**
 * The retry loop shared by `retry` and the fetch wrappers. `signals` are the caller's (for
 * fetch: `options.signal`, `init.signal` and the `Request`'s own); any of them cancels.
 */
export async function runWithRetries<T>(
  run: Attempt<T>,
  o: ResolvedOptions,
  signals: readonly AbortSignal[] = o.signal ? [o.signal] : [],
): Promise<T> {
  for (const s of signals) if (s.aborted) throw abortReason(s);
  const deadline = Date.now() + (o.deadlineMs ?? Infinity);
  // The deadline aborts `internal`; attempts and waits listen to it combined with the caller's
  // signals, which keep reaching a returned response's body after the call, as with fetch.
  const internal = new AbortController();
  const { signal, unlink } = anySignal([...signals, internal.signal]);
  let attempt = 0;
  let lastResponse: Response | undefined;
  const cancelDeadline = !Number.isFinite(deadline)
    ? undefined
    : later(o.deadlineMs as number, () => {
        internal.abort(
          new RetryDeadlineError({
            delayMs: 0,
            deadlineMs: o.deadlineMs as number,
            attempt,
            response: lastResponse,
          }),
        );
      });

  try {
    let previousBackoff = o.baseDelayMs;
    for (;;) {
      attempt += 1;
      let outcome: Outcome<T>;
      try {
        outcome = await run(attempt, signal, deadline);
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
      if (outcome.notRetried !== undefined) throw outcome.notRetried;
      const at: WaitAt = { attempt, response: outcome.response, cause: outcome.error };

      let delayMs: number;
      let source: DelaySource;
      if (outcome.serverDelayMs !== undefined) {
        const server = boundedDelay(outcome.serverDelayMs, o, at);
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
      checkDeadline(delayMs, deadline, o, at);
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
  } catch (error) {
    // No response leaves the call, so nothing needs the caller's signals any more.
    unlink();
    throw error;
  } finally {
    cancelDeadline?.();
  }
}

/**
 * Aborts when any of `signals` does. `AbortSignal.any` (Node 20.3+, current browsers) holds its
 * sources weakly. Older runtimes get plain listeners; `unlink` removes them, so a long-lived
 * signal shared by many calls does not collect one per call that failed. (After a call that
 * returned a response they stay, so that an abort still reaches its body.)
 */
function anySignal(signals: AbortSignal[]): { signal: AbortSignal; unlink: () => void } {
  const any = (AbortSignal as { any?: (signals: AbortSignal[]) => AbortSignal }).any;
  if (typeof any === 'function') return { signal: any.call(AbortSignal, signals), unlink() {} };
  const combined = new AbortController();
  const onAbort = (event: Event): void => {
    unlink();
    combined.abort(abortReason(event.target as AbortSignal));
  };
  const unlink = (): void => {
    for (const s of signals) s.removeEventListener('abort', onAbort);
  };
  for (const s of signals) s.addEventListener('abort', onAbort);
  return { signal: combined.signal, unlink };
}
