import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FrameworkSettings } from '../keys/route.js';
import type { Outcome } from './engine.js';
import { mergeExposeHeaders } from './response.js';
import type { RateLimitRequest } from './types.js';

const EXPOSE = 'Access-Control-Expose-Headers';

/** The request view over a node:http request (also what Express and Fastify wrap). */
export function incomingView<Raw>(
  req: IncomingMessage,
  raw: Raw,
  path: string,
  route: string | undefined,
  framework?: FrameworkSettings,
): RateLimitRequest<Raw> {
  return {
    ...(framework === undefined ? {} : { framework }),
    method: req.method ?? 'GET',
    path,
    route,
    address: req.socket?.remoteAddress,
    header(name) {
      const value = req.headers[name.toLowerCase()];
      return Array.isArray(value) ? value.join(', ') : value;
    },
    raw,
  };
}

/**
 * The path of a request target, without its query string. Node accepts absolute-form targets
 * (`GET http://host/search`): their scheme and host are not part of the path.
 */
export function pathOf(url: string | undefined): string {
  const target = (url ?? '/').replace(/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/, '');
  const q = target.search(/[?#]/);
  const path = q === -1 ? target : target.slice(0, q);
  return path === '' ? '/' : path;
}

function exposed(res: ServerResponse): string | undefined {
  const v = res.getHeader(EXPOSE);
  return Array.isArray(v) ? v.join(', ') : v === undefined ? undefined : String(v);
}

/**
 * Sets the outcome's headers. The expose list is merged now and again just before the head is
 * written, so CORS middleware that runs later and overwrites the header does not hide ours.
 */
export function setOutcomeHeaders(res: ServerResponse, outcome: Outcome): void {
  for (const [name, value] of Object.entries(outcome.headers)) res.setHeader(name, value);
  const names = outcome.expose;
  if (names.length === 0) return;
  res.setHeader(EXPOSE, mergeExposeHeaders(exposed(res), names));
  const writeHead = res.writeHead;
  // res.end() without an explicit writeHead goes through it too (_implicitHeader).
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (!this.headersSent) this.setHeader(EXPOSE, mergeExposeHeaders(exposed(this), names));
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
}

/** Answers the request with the outcome (a 429, a 503 or an `onLimited` response). */
export function sendOutcome(res: ServerResponse, outcome: Outcome & { action: 'respond' }): void {
  setOutcomeHeaders(res, outcome);
  res.statusCode = outcome.status;
  res.end(outcome.body);
}

/** Aborts when the response closes before it was sent: the client went away. */
export function closeSignal(res: ServerResponse): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onClose = (): void => controller.abort();
  if (res.destroyed || res.socket?.destroyed) controller.abort();
  else res.once('close', onClose);
  return { signal: controller.signal, dispose: () => res.off('close', onClose) };
}
