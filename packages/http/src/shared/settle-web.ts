// A request's settle on a Web Response (fetch, Hono). Refunds (skipSuccessfulRequests /
// skipFailedRequests) need only the status, known once the handler answered. Reservations
// (`settle`) need the end of the body: its last chunk read, the body cancelled or failed, or the
// request's signal aborted (the client went away), whichever comes first; on the concurrency
// middleware's own ends (concurrency-web.ts). Runtime-neutral: no node:* import.
import { releaseAfter, releaseOnAbort } from './concurrency-web.js';
import { settlesAtEnd } from './reservations.js';
import type { Settle } from './settle.js';

/**
 * Settles `response`'s request: at once with its status, or (reservations) once its body is
 * done, returning the response with its body passed through. `signal` is asked for only then:
 * some runtimes make it on first read.
 */
export function settleResponse(
  response: Response,
  settle: Settle,
  signal: () => AbortSignal,
): Response {
  const status = response.status;
  if (!settlesAtEnd(settle)) {
    settle(status);
    return response;
  }
  releaseOnAbort(signal(), () => settle(status, true));
  return releaseAfter(response, (finished) => settle(status, !finished));
}
