// When a request's exchange is over, for the concurrency middleware: node:http's response
// (node, Express, Fastify) and a Web Response (fetch, Hono). Either way the lease is released
// when the response has been sent or when the client went away, whichever comes first.
import type { ServerResponse } from 'node:http';
import { type Admission, EXPOSE } from './concurrency.js';
import { mergeExposeHeaders } from './response.js';

/**
 * Sends a denial on `res`, or ties the release to the response: `'finish'` (all of it handed
 * to the OS) or `'close'` (the connection closed, maybe before the end). True: go on.
 */
export function admitIncoming(res: ServerResponse, admission: Admission): boolean {
  if (admission.action === 'respond') {
    for (const [name, value] of Object.entries(admission.headers)) {
      // Added to what a CORS middleware before this one exposes, not in its place.
      if (name === EXPOSE) res.setHeader(name, mergeExposeHeaders(exposed(res), [value]));
      else res.setHeader(name, value);
    }
    res.statusCode = admission.status;
    res.end(admission.body);
    return false;
  }
  return tieRelease(res, admission.release);
}

/** Releases on `'finish'` or `'close'`; at once (and false) when the client is already gone. */
export function tieRelease(res: ServerResponse, release: () => void): boolean {
  // The client may have left while the lease was acquired: 'close' has been emitted already.
  if (res.destroyed || res.socket?.destroyed === true) {
    release();
    return false;
  }
  res.once('finish', release);
  res.once('close', release);
  return true;
}

function exposed(res: ServerResponse): string | undefined {
  const v = res.getHeader(EXPOSE);
  return Array.isArray(v) ? v.join(', ') : v === undefined ? undefined : String(v);
}
