// The fetch adapter's headers on a Web Response: as a `Headers` (`headersFor`, a denial) or
// set straight from the engine's outcome on the handler's response.
import type { Outcome } from '../shared/engine.js';
import { mergeExposeHeaders } from '../shared/response.js';

const EXPOSE = 'Access-Control-Expose-Headers';
const EXPOSE_LOWER = EXPOSE.toLowerCase();

/** The outcome's headers as a `Headers`, with `Access-Control-Expose-Headers` when it exposes any. */
export function toHeaders(outcome: Outcome): Headers {
  const headers = new Headers(outcome.headers);
  if (outcome.expose.length > 0) headers.set(EXPOSE, mergeExposeHeaders(undefined, outcome.expose));
  return headers;
}

/**
 * Copies headers onto a response; a response with immutable headers is re-wrapped first.
 * `Access-Control-Expose-Headers` is merged with the response's own rather than replaced.
 * @example
 * A response from `fetch()` has immutable headers: the copy gets them.
 * ```ts
 * import { withHeaders } from '@floodgate/http/fetch';
 *
 * const upstream = await fetch('https://api.example.com/items');
 * const response = withHeaders(upstream, new Headers({ RateLimit: '"api";r=99;t=60' }));
 * ```
 * @public
 */
export function withHeaders(response: Response, headers: Headers): Response {
  const out = writable(response);
  for (const [name, value] of headers) {
    out.headers.set(
      name,
      name.toLowerCase() === EXPOSE_LOWER
        ? mergeExposeHeaders(out.headers.get(EXPOSE) ?? undefined, value.split(', '))
        : value,
    );
  }
  return out;
}

/** `response`, or a copy of it when its headers are immutable (a `fetch()` response's). */
function writable(response: Response): Response {
  try {
    response.headers.set('x-floodgate-probe', '1');
    response.headers.delete('x-floodgate-probe');
    return response;
  } catch {
    return new Response(response.body, response);
  }
}

/**
 * `withHeaders(response, toHeaders(outcome))` without the `Headers` in between: the outcome's
 * headers set on the response, its names merged into the response's expose list.
 */
export function withOutcome(response: Response, outcome: Outcome): Response {
  const own = outcome.headers;
  for (const name in own) {
    // An expose list of the outcome's own (none of the engine's makes one): the general path.
    if (name.toLowerCase() === EXPOSE_LOWER) return withHeaders(response, toHeaders(outcome));
  }
  const out = writable(response);
  const headers = out.headers;
  for (const name in own) headers.set(name, own[name] as string);
  if (outcome.expose.length > 0) {
    headers.set(EXPOSE, mergeExposeHeaders(headers.get(EXPOSE) ?? undefined, outcome.expose));
  }
  return out;
}
