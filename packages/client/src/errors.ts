/**
 * Stable error codes of `@floodgate/client`. A code, once published, keeps its meaning.
 * @example
 * ```ts
 * import { isRetryError, type RetryErrorCode } from '@floodgate/client';
 *
 * const messages: Record<RetryErrorCode, string> = {
 *   INVALID_OPTION: 'bad retry options (a bug)',
 *   DELAY_TOO_LONG: 'the service asked us to wait too long',
 *   DEADLINE_EXCEEDED: 'the service did not answer in time',
 *   BODY_NOT_REPLAYABLE: 'refused, and a streamed body cannot be sent again',
 * };
 * declare const error: unknown;
 * if (isRetryError(error)) console.error(messages[error.code]);
 * ```
 * @public
 */
export type RetryErrorCode =
  | 'INVALID_OPTION'
  | 'DELAY_TOO_LONG'
  | 'DEADLINE_EXCEEDED'
  | 'BODY_NOT_REPLAYABLE';

// A registered symbol survives duplicate package copies and realms (iframes, workers, vm
// contexts), where `instanceof` would not.
const BRAND = Symbol.for('floodgate.client.error');

/**
 * The base of every error this package throws. `cause` holds the underlying error, if any.
 * Bad options throw it with `code: 'INVALID_OPTION'`, before any request is made.
 * @example
 * ```ts
 * import { RetryError, withRetry } from '@floodgate/client';
 *
 * try {
 *   withRetry(fetch, { retries: -1 });
 * } catch (error) {
 *   if (error instanceof RetryError) console.error(error.code); // 'INVALID_OPTION'
 * }
 * ```
 * @public
 */
export class RetryError extends Error {
  readonly code: RetryErrorCode;
  readonly [BRAND] = true;

  constructor(code: RetryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryError';
    this.code = code;
  }
}

/** The error every bad option throws, before any request is made (one place: the bundle's size). */
export function invalidOption(message: string): RetryError {
  return new RetryError('INVALID_OPTION', message);
}

/**
 * What the last attempt left behind, carried by the errors that end a retry loop early.
 * @example
 * ```ts
 * import type { RetryDeadlineError, RetryErrorDetails } from '@floodgate/client';
 *
 * function describe(details: RetryErrorDetails): string {
 *   const status = details.response?.status ?? 'no response';
 *   return `attempt ${details.attempt} (${status}), next wait ${details.delayMs} ms`;
 * }
 * declare const error: RetryDeadlineError;
 * console.warn(describe(error));
 * ```
 * @public
 */
export interface RetryErrorDetails {
  /** The delay that was asked for (server delay or backoff), in ms. */
  readonly delayMs: number;
  /** The attempt that was just made, 1-based. */
  readonly attempt: number;
  /** The last response, when the last attempt produced one (its body is left unread). */
  readonly response?: Response;
  readonly cause?: unknown;
}

/**
 * The server asked for a longer wait than `maxDelayMs` allows (with `onMaxDelay: 'throw'`, the
 * default). Waiting would hold the caller hostage; retrying earlier would be refused anyway.
 * @example
 * ```ts
 * import { fetchWithRetry, RetryDelayTooLongError } from '@floodgate/client';
 *
 * try {
 *   await fetchWithRetry('https://api.example.com/report', undefined, { maxDelayMs: 10_000 });
 * } catch (error) {
 *   if (!(error instanceof RetryDelayTooLongError)) throw error;
 *   console.warn(`asked to wait ${error.delayMs} ms; we wait at most ${error.maxDelayMs} ms`);
 * }
 * ```
 * @public
 */
export class RetryDelayTooLongError extends RetryError {
  readonly delayMs: number;
  readonly maxDelayMs: number;
  readonly attempt: number;
  readonly response: Response | undefined;

  constructor(details: RetryErrorDetails & { maxDelayMs: number }) {
    super(
      'DELAY_TOO_LONG',
      `the server asked to wait ${details.delayMs} ms, more than maxDelayMs (${details.maxDelayMs} ms)`,
      { cause: details.cause },
    );
    this.name = 'RetryDelayTooLongError';
    this.delayMs = details.delayMs;
    this.maxDelayMs = details.maxDelayMs;
    this.attempt = details.attempt;
    this.response = details.response;
  }
}

/**
 * `deadlineMs` ran out: either an attempt was still running when it did, or the next wait would
 * have ended after it (there is no point sleeping towards a retry that may not be made).
 * @example
 * ```ts
 * import { fetchWithRetry, RetryDeadlineError } from '@floodgate/client';
 *
 * try {
 *   await fetchWithRetry('https://api.example.com/items', undefined, { deadlineMs: 5_000 });
 * } catch (error) {
 *   if (!(error instanceof RetryDeadlineError)) throw error;
 *   console.warn(`no answer within ${error.deadlineMs} ms (${error.attempt} attempts)`);
 * }
 * ```
 * @public
 */
export class RetryDeadlineError extends RetryError {
  readonly delayMs: number;
  readonly deadlineMs: number;
  readonly attempt: number;
  readonly response: Response | undefined;

  constructor(details: RetryErrorDetails & { deadlineMs: number }) {
    super('DEADLINE_EXCEEDED', `gave up: deadlineMs (${details.deadlineMs} ms) ran out`, {
      cause: details.cause,
    });
    this.name = 'RetryDeadlineError';
    this.delayMs = details.delayMs;
    this.deadlineMs = details.deadlineMs;
    this.attempt = details.attempt;
    this.response = details.response;
  }
}

/**
 * A retry was due (a 429 or 503, or a network error, of a retryable request), but the request's
 * body is a stream (`ReadableStream`, an async iterable, a Node `Readable`): it was read by the
 * attempt that was made and cannot be sent again. Sending the retry would send an empty or
 * broken body, so it is not sent. `response` is the refused response (body unread), `cause`
 * the network error, whichever the attempt produced. Buffer the body (or pass a function that
 * builds it to `retry`) to make such a request retryable.
 * @example
 * ```ts
 * import { isRetryBodyNotReplayableError, withRetry } from '@floodgate/client';
 *
 * declare const upload: ReadableStream<Uint8Array>;
 * const api = withRetry(fetch);
 * try {
 *   await api('https://api.example.com/files/1', { method: 'PUT', body: upload });
 * } catch (error) {
 *   if (!isRetryBodyNotReplayableError(error)) throw error;
 *   console.warn(`not retried (${error.response?.status}): open the stream again and resend`);
 * }
 * ```
 * @public
 */
export class RetryBodyNotReplayableError extends RetryError {
  readonly attempt: number;
  readonly response: Response | undefined;

  constructor(details: Omit<RetryErrorDetails, 'delayMs'>) {
    super(
      'BODY_NOT_REPLAYABLE',
      `not retried: the request body is a stream, already sent once (${details.response ? `status ${details.response.status}` : 'network error'})`,
      { cause: details.cause },
    );
    this.name = 'RetryBodyNotReplayableError';
    this.attempt = details.attempt;
    this.response = details.response;
  }
}

function branded(value: unknown): value is RetryError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  );
}

/**
 * True for any error of this package, including one from another copy or realm.
 * @example
 * ```ts
 * import { isRetryError, withRetry } from '@floodgate/client';
 *
 * const api = withRetry(fetch);
 * try {
 *   await api('https://api.example.com/items');
 * } catch (error) {
 *   if (!isRetryError(error)) throw error; // network failure, abort: not ours
 *   console.warn(`gave up (${error.code}): ${error.message}`);
 * }
 * ```
 * @public
 */
export function isRetryError(value: unknown): value is RetryError {
  return branded(value);
}

/**
 * True for a {@link RetryDelayTooLongError}, including one from another copy or realm.
 * @example
 * ```ts
 * import { isRetryDelayTooLongError } from '@floodgate/client';
 *
 * declare const error: unknown;
 * if (isRetryDelayTooLongError(error)) {
 *   console.warn(`busy: try again in ${Math.ceil(error.delayMs / 1000)} s`);
 * }
 * ```
 * @public
 */
export function isRetryDelayTooLongError(value: unknown): value is RetryDelayTooLongError {
  return branded(value) && value.code === 'DELAY_TOO_LONG';
}

/**
 * True for a {@link RetryDeadlineError}, including one from another copy or realm.
 * @example
 * ```ts
 * import { isRetryDeadlineError } from '@floodgate/client';
 *
 * declare const error: unknown;
 * if (isRetryDeadlineError(error)) {
 *   console.warn(`gave up after ${error.attempt} attempts (deadline ${error.deadlineMs} ms)`);
 * }
 * ```
 * @public
 */
export function isRetryDeadlineError(value: unknown): value is RetryDeadlineError {
  return branded(value) && value.code === 'DEADLINE_EXCEEDED';
}

/**
 * True for a {@link RetryBodyNotReplayableError}, including one from another copy or realm.
 * @example
 * ```ts
 * import { isRetryBodyNotReplayableError } from '@floodgate/client';
 *
 * declare const error: unknown;
 * if (isRetryBodyNotReplayableError(error)) console.warn(error.message);
 * ```
 * @public
 */
export function isRetryBodyNotReplayableError(
  value: unknown,
): value is RetryBodyNotReplayableError {
  return branded(value) && value.code === 'BODY_NOT_REPLAYABLE';
}

/**
 * Thrown by a `retry()` callback to ask for another attempt after a delay the server gave
 * (e.g. read from a gRPC status or a queue's visibility timeout). The delay goes through the
 * same `maxDelayMs`, deadline and jitter rules as a `Retry-After`.
 * @example
 * ```ts
 * import { RetryLater, retry } from '@floodgate/client';
 *
 * declare function send(batch: string[]): Promise<{ status: number; retryAfterMs: number }>;
 * await retry(async () => {
 *   const result = await send(['event-1', 'event-2']);
 *   if (result.status === 429) throw new RetryLater(result.retryAfterMs);
 * }, { maxDelayMs: 30_000 });
 * ```
 * @public
 */
export class RetryLater extends Error {
  readonly delayMs: number;

  constructor(delayMs: number, options?: { cause?: unknown }) {
    super(`retry after ${delayMs} ms`, options);
    this.name = 'RetryLater';
    this.delayMs = delayMs;
  }
}
