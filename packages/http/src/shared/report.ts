import type { RateLimitRequest } from './types.js';

/**
 * Tells `onError`, which must not turn an absorbed error into an unanswered request: if it
 * throws, that is logged and the request is answered as `onLimiterError` says all the same.
 */
export function report(
  onError: ((error: unknown, request: RateLimitRequest | undefined) => void) | undefined,
  error: unknown,
  request: RateLimitRequest | undefined,
): void {
  try {
    onError?.(error, request);
  } catch (thrown) {
    console.error('@floodgate/http: onError threw (the request is answered regardless):', thrown);
  }
}
