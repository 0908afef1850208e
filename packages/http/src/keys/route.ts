import type { FrameworkSettings } from '../shared/framework.js';
import type { KeyFunction } from '../shared/types.js';

// scheme "://" authority: what an absolute-form request target (RFC 9112 §3.2.2) adds.
const ABSOLUTE_FORM = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/;

function decodeSegment(segment: string): string {
  if (!segment.includes('%')) return segment;
  try {
    // A decoded "/" would make a segment boundary the router never saw.
    return decodeURIComponent(segment).replace(/\//g, '%2F');
  } catch {
    return segment;
  }
}

/**
 * The path a router sees in a request target, in one spelling per handler: origin-form only (an
 * absolute-form target's scheme and host dropped), no query or fragment, percent-decoded, dot
 * segments resolved, and, unless the rules say otherwise, lower case without a trailing slash.
 * Where the rules are unknown the folding errs toward one bucket: two handlers that share a
 * count only ever limit more, never less.
 * @example
 * ```ts
 * import { canonicalPath } from '@floodgate/http/adapter';
 *
 * canonicalPath('http://anything/Search/?q=1'); // '/search'
 * canonicalPath('/a/./b/../%73earch'); // '/a/search'
 * canonicalPath('/Search/', { caseSensitive: true, strictRouting: true }); // '/Search/'
 * ```
 * @public
 */
export function canonicalPath(
  target: string,
  rules: Pick<FrameworkSettings, 'caseSensitive' | 'strictRouting'> = {},
): string {
  let path = target.replace(ABSOLUTE_FORM, '');
  const end = path.search(/[?#]/);
  if (end !== -1) path = path.slice(0, end);
  if (path === '*') return path;
  const out: string[] = [];
  const segments = path.split('/');
  // The first element is what precedes the leading "/": nothing in origin-form.
  for (let i = 1; i < segments.length; i++) {
    const segment = decodeSegment(segments[i]!);
    const last = i === segments.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..') out.pop();
      // "/a/b/.." is the directory "/a/": keep the slash where the dot segment was the last one.
      if (last) out.push('');
      continue;
    }
    out.push(segment);
  }
  let canonical = `/${out.join('/')}`;
  if (!rules.strictRouting && canonical.length > 1)
    canonical = canonical.replace(/\/+$/, '') || '/';
  if (!rules.caseSensitive) canonical = canonical.toLowerCase();
  return canonical;
}

/**
 * Counts by route: `route:<METHOD> <pattern>`, naming the handler that will run. That is the
 * matched pattern where the framework knows it (Fastify, Hono; Express when the middleware is
 * mounted on the route), else the canonical path (see {@link canonicalPath}) under the
 * framework's case and trailing-slash rules. `HEAD` counts as `GET`, whose handler answers it.
 * Combine it with a client key to protect one endpoint per client, or use it alone to cap an
 * endpoint for everyone.
 * @example
 * Each client gets its own allowance per endpoint.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { combineKeys, ipKey, routeKey } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/express';
 *
 * declare const limiter: Limiter;
 * const perRoutePerIp = rateLimit({ limiter, key: combineKeys(routeKey(), ipKey()) });
 * ```
 * @public
 */
export function routeKey(): KeyFunction {
  return (request) => {
    const method = request.method.toUpperCase();
    const pattern = request.route ?? canonicalPath(request.path, request.framework);
    return `route:${method === 'HEAD' ? 'GET' : method} ${pattern}`;
  };
}
