// The concurrency middleware's end of an exchange for Web Responses (fetch, Hono): the body's
// last chunk read, the body cancelled (the client went away mid-stream), or the request's
// signal aborted, whichever comes first (settle-web.ts settles reservations on the same
// ends). Runtime-neutral: no node:* import.
import type { Admission } from './concurrency.js';

/** The denial as a Web Response. */
export function denialResponse(admission: Admission & { action: 'respond' }): Response {
  return new Response(admission.body, { status: admission.status, headers: admission.headers });
}

/**
 * Releases when the request's signal aborts (the client went away), even while the handler
 * still runs. Called before the handler.
 */
export function releaseOnAbort(signal: AbortSignal, release: () => void): void {
  if (signal.aborted) release();
  else signal.addEventListener('abort', release, { once: true });
}

/**
 * `response` with its body passed through, calling `release` once the body ends, fails or is
 * cancelled (`finished`: it ended); at once when it has no body.
 */
export function releaseAfter(response: Response, release: (finished: boolean) => void): Response {
  const body = response.body;
  if (body === null) {
    release(true);
    return response;
  }
  const reader = body.getReader();
  const stream = new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (done) {
          release(true);
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        release(false);
        controller.error(error);
      }
    },
    cancel(reason) {
      release(false);
      return reader.cancel(reason);
    },
  });
  return new Response(stream, {
    status: response.status,
    statusText: response.statusText,
    headers: response.headers,
  });
}
