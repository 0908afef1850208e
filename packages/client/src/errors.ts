/** Stable error codes of `@floodgate/client`. A code, once published, keeps its meaning. */
export type RetryErrorCode = 'INVALID_OPTION' | 'DELAY_TOO_LONG' | 'DEADLINE_EXCEEDED';

// A registered symbol survives duplicate package copies and realms (iframes, workers, vm
// contexts), where `instanceof` would not.
const BRAND = Symbol.for('floodgate.client.error');

/** The base of every error this package throws. `cause` holds the underlying error, if any. */
export class RetryError extends Error {
  readonly code: RetryErrorCode;
  readonly [BRAND] = true;

  constructor(code: RetryErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'RetryError';
    this.code = code;
  }
}

/** What the last attempt left behind, carried by the errors that end a retry loop early. */
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

function branded(value: unknown): value is RetryError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  );
}

/** True for any error of this package, including one from another copy or realm. */
export function isRetryError(value: unknown): value is RetryError {
  return branded(value);
}

/** True for a {@link RetryDelayTooLongError}, including one from another copy or realm. */
export function isRetryDelayTooLongError(value: unknown): value is RetryDelayTooLongError {
  return branded(value) && value.code === 'DELAY_TOO_LONG';
}

/** True for a {@link RetryDeadlineError}, including one from another copy or realm. */
export function isRetryDeadlineError(value: unknown): value is RetryDeadlineError {
  return branded(value) && value.code === 'DEADLINE_EXCEEDED';
}

/**
 * Thrown by a `retry()` callback to ask for another attempt after a delay the server gave
 * (e.g. read from a gRPC status or a queue's visibility timeout). The delay goes through the
 * same `maxDelayMs`, deadline and jitter rules as a `Retry-After`.
 */
export class RetryLater extends Error {
  readonly delayMs: number;

  constructor(delayMs: number, options?: { cause?: unknown }) {
    super(`retry after ${delayMs} ms`, options);
    this.name = 'RetryLater';
    this.delayMs = delayMs;
  }
}
