import type { IncomingMessage, OutgoingHttpHeader, ServerResponse } from 'node:http';
import type { Decision } from '@floodgate/core';
import type { Outcome, RateLimitEngine } from './engine.js';
import type { FrameworkSettings } from './framework.js';
import { mergeExposeHeaders } from './response.js';
import type { Settle } from './settle.js';
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
  const method = req.method ?? 'GET';
  const address = req.socket?.remoteAddress;
  const header = (name: string): string | undefined => {
    const value = req.headers[name.toLowerCase()];
    return Array.isArray(value) ? value.join(', ') : value;
  };
  // Two plain literals rather than a conditional spread: built on every request, and a spread
  // into a literal is the slow, shape-changing way to make one.
  return framework === undefined
    ? { method, path, route, address, header, raw }
    : { framework, method, path, route, address, header, raw };
}

/**
 * The path of a request target, without its query string. Node accepts absolute-form targets
 * (`GET http://host/search`): their scheme and host are not part of the path.
 */
export function pathOf(url: string | undefined): string {
  // The usual origin-form target (`/path?query`): cut at the first `?` or `#` without a regex.
  if (url !== undefined && url.charCodeAt(0) === 47 /* / */) {
    for (let i = 1; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c === 63 /* ? */ || c === 35 /* # */) return url.slice(0, i);
    }
    return url;
  }
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
  const headers = outcome.headers;
  for (const name in headers) res.setHeader(name, headers[name] as string);
  const names = outcome.expose;
  if (names.length === 0) return;
  res.setHeader(EXPOSE, mergeExposeHeaders(exposed(res), names));
  const writeHead = res.writeHead;
  // res.end() without an explicit writeHead goes through it too (_implicitHeader).
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    if (!this.headersSent) this.setHeader(EXPOSE, mergeExposeHeaders(exposed(this), names));
    // writeHead(status, [message,] headers): fields given here replace what was set before.
    const at = typeof args[1] === 'string' ? 2 : 1;
    if (typeof args[at] === 'object' && args[at] !== null) {
      args[at] = mergeExposeInto(args[at] as HeadersArgument, names);
    }
    return (writeHead as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as ServerResponse['writeHead'];
}

type HeadersArgument = Record<string, OutgoingHttpHeader | undefined> | readonly unknown[];

const isExpose = (name: unknown): boolean =>
  typeof name === 'string' && name.toLowerCase() === EXPOSE.toLowerCase();
const listOf = (value: unknown): string =>
  Array.isArray(value) ? value.join(', ') : value === undefined ? '' : String(value);

/**
 * The `writeHead` headers (an object or a flat `[name, value, …]` list)
 * with our names merged into their expose list, if they carry one; a copy, never the caller's.
 */
function mergeExposeInto(headers: HeadersArgument, names: readonly string[]): HeadersArgument {
  if (!Array.isArray(headers)) {
    const record = headers as Record<string, OutgoingHttpHeader | undefined>;
    const keys = Object.keys(record).filter(isExpose);
    if (keys.length === 0) return headers;
    const copy: Record<string, OutgoingHttpHeader | undefined> = { ...record };
    const given = keys.map((k) => listOf(copy[k])).join(', ');
    for (const k of keys) delete copy[k];
    copy[EXPOSE] = mergeExposeHeaders(given, names);
    return copy;
  }
  // Node takes a flat `[name, value, name, value, …]` list here, not pairs.
  const pairs = Array.from({ length: Math.floor(headers.length / 2) }, (_, i) => [
    headers[2 * i],
    headers[2 * i + 1],
  ]);
  if (!pairs.some(([name]) => isExpose(name))) return headers;
  const given = pairs.filter(([name]) => isExpose(name)).map(([, value]) => listOf(value));
  const kept = pairs.filter(([name]) => !isExpose(name));
  kept.push([EXPOSE, mergeExposeHeaders(given.join(', '), names)]);
  return kept.flat() as string[];
}

/** What the node-style adapters put on `req`: the decision its headers report. */
export interface RateLimitedIncoming {
  rateLimit?: Decision;
}

/**
 * The whole middleware on node:http objects (node, Express): decide, hold a delayed request,
 * answer or set the headers. True when the request may go on.
 */
export async function limitIncoming<Raw>(
  engine: RateLimitEngine,
  view: RateLimitRequest<Raw>,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<boolean> {
  const outcome = await engine.admit(view, () => closeSignal(res));
  if (outcome === undefined) return false;
  if (outcome.decision !== undefined) (req as RateLimitedIncoming).rateLimit = outcome.decision;
  if (outcome.action === 'respond') {
    sendOutcome(res, outcome);
    return false;
  }
  setOutcomeHeaders(res, outcome);
  if (outcome.settle !== undefined) settleOnFinish(res, outcome.settle);
  return true;
}

/**
 * `skipSuccessfulRequests` / `skipFailedRequests` and `settle` on node:http: settles with the
 * status once the response finished (a streamed one: after its last chunk), or as cut short
 * when the connection closed before it did (with the status, if the head was sent).
 */
export function settleOnFinish(res: ServerResponse, settle: Settle): void {
  // The client may have left while the limiter decided: 'close' has been emitted already.
  if (res.destroyed || res.socket?.destroyed === true) {
    settle(res.headersSent ? res.statusCode : undefined, true);
    return;
  }
  res.once('finish', () => settle(res.statusCode));
  res.once('close', () => {
    if (!res.writableFinished) settle(res.headersSent ? res.statusCode : undefined, true);
  });
}

/** Answers the request with the outcome (a 429, a 503 or an `onLimited` response). */
export function sendOutcome(res: ServerResponse, outcome: Outcome & { action: 'respond' }): void {
  setOutcomeHeaders(res, outcome);
  res.statusCode = outcome.status;
  res.end(outcome.body);
}

/** A 500 for a failure writing the answer (an `onLimited` header node refuses, say). */
export function answerFailure(res: ServerResponse): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  for (const name of res.getHeaderNames()) res.removeHeader(name);
  res.statusCode = 500;
  res.setHeader('Content-Type', 'application/problem+json');
  res.end(
    JSON.stringify({
      type: 'about:blank',
      title: 'Internal Server Error',
      status: 500,
      detail: 'The rate limiter could not write its answer.',
    }),
  );
}

/** Aborts when the response closes before it was sent: the client went away. */
export function closeSignal(res: ServerResponse): { signal: AbortSignal; dispose: () => void } {
  const controller = new AbortController();
  const onClose = (): void => controller.abort();
  if (res.destroyed || res.socket?.destroyed) controller.abort();
  else res.once('close', onClose);
  return { signal: controller.signal, dispose: () => res.off('close', onClose) };
}
