/** Stable error codes. A code, once published, keeps its meaning. */
export type FloodgateErrorCode =
  | 'INVALID_POLICY'
  | 'INVALID_KEY'
  | 'INVALID_COST'
  | 'INVALID_OPTION'
  | 'COST_EXCEEDS_CAPACITY'
  | 'STORE_UNAVAILABLE'
  | 'STORE_TIMEOUT'
  | 'STORE_PROTOCOL';

// A registered symbol survives duplicate package copies and realms (workers, vm contexts), where
// `instanceof` would not.
const BRAND = Symbol.for('floodgate.error');

/** The one error class Floodgate throws. Denials are never errors: they are decisions. */
export class FloodgateError extends Error {
  readonly code: FloodgateErrorCode;
  readonly [BRAND] = true;

  constructor(code: FloodgateErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FloodgateError';
    this.code = code;
  }
}

/** True for any FloodgateError, including one from another copy of this package or realm. */
export function isFloodgateError(value: unknown): value is FloodgateError {
  return (
    typeof value === 'object' &&
    value !== null &&
    (value as Record<symbol, unknown>)[BRAND] === true
  );
}
