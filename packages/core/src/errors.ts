/**
 * Stable error codes. A code, once published, keeps its meaning.
 * @example
 * A function typed with it: map a code to an HTTP status.
 * ```ts
 * import type { FloodgateErrorCode } from '@floodgate/core';
 *
 * function statusFor(code: FloodgateErrorCode): number {
 *   return code.startsWith('STORE_') ? 503 : 400;
 * }
 * ```
 * @public
 */
export type FloodgateErrorCode =
  | 'INVALID_POLICY'
  | 'INVALID_KEY'
  | 'INVALID_COST'
  | 'INVALID_OPTION'
  | 'INVALID_OVERRIDE'
  | 'COST_EXCEEDS_CAPACITY'
  | 'STORE_UNAVAILABLE'
  | 'STORE_TIMEOUT'
  | 'STORE_PROTOCOL'
  | 'WAIT_TIMEOUT'
  | 'ABORTED'
  | 'ALREADY_SETTLED'
  | 'RESERVATION_DENIED'
  | 'RESERVATION_EXPIRED';

// A registered symbol survives duplicate package copies and realms (workers, vm contexts), where
// `instanceof` would not.
const BRAND = Symbol.for('floodgate.error');

/**
 * The one error class Floodgate throws. Denials are never errors: they are decisions.
 * @example
 * A store for another backend reports a malformed reply the way Floodgate's own stores do.
 * ```ts
 * import { FloodgateError } from '@floodgate/core';
 *
 * function readCount(reply: unknown): number {
 *   if (typeof reply !== 'number') {
 *     throw new FloodgateError('STORE_PROTOCOL', `expected a number, got ${typeof reply}`);
 *   }
 *   return reply;
 * }
 * ```
 * @public
 */
export class FloodgateError extends Error {
  readonly code: FloodgateErrorCode;

  constructor(code: FloodgateErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FloodgateError';
    this.code = code;
    // Set here, not declared as a field: a `unique symbol` member in the declarations makes the
    // class nominal per declaration file, so the ESM and CJS typings of one version (both loaded
    // in a project with .mts and .cts files) stop being the same type (TS2717 on any interface
    // that a package augments with a type reaching this class).
    Object.defineProperty(this, BRAND, { value: true });
  }
}

/**
 * True for any FloodgateError, including one from another copy of this package or realm.
 * @example
 * Telling a configuration error from any other failure.
 * ```ts
 * import { type Limiter, isFloodgateError } from '@floodgate/core';
 *
 * declare const limiter: Limiter;
 * try {
 *   await limiter.limit('key_123', { cost: 500 });
 * } catch (error) {
 *   if (!isFloodgateError(error) || error.code !== 'COST_EXCEEDS_CAPACITY') throw error;
 *   console.error(error.message); // no policy can ever admit 500 units
 * }
 * ```
 * @public
 */
export function isFloodgateError(value: unknown): value is FloodgateError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  );
}

/** Errors about the caller's input or configuration: they reach the caller, never the fallback. */
export function isCallerError(error: unknown): boolean {
  return (
    isFloodgateError(error) &&
    (error.code.startsWith('INVALID_') || error.code === 'COST_EXCEEDS_CAPACITY')
  );
}

/**
 * A store failure as the limiter reports it: a timeout or unavailability stays as it is, anything
 * else a store threw becomes `STORE_UNAVAILABLE` with it as the `cause`.
 */
export function storeError(cause: unknown): FloodgateError {
  return isFloodgateError(cause) &&
    (cause.code === 'STORE_TIMEOUT' || cause.code === 'STORE_UNAVAILABLE')
    ? cause
    : new FloodgateError('STORE_UNAVAILABLE', 'the store failed', { cause });
}
