import { RetryBudget } from './budget.js';
import { type Attempt, boundedDelay, checkDeadline, runWithRetries } from './engine.js';
import { invalidOption, RetryBodyNotReplayableError } from './errors.js';
import { type ResolvedOptions, type RetryOptions, resolveOptions } from './options.js';
import { Pacer } from './pacing.js';
import { type ServerDelayReader, serverDelay } from './server-delay.js';
import { sleep } from './sleep.js';

/**
 * Anything shaped like `fetch`.
 * @example
 * A fetch that adds credentials, wrapped with retries.
 * ```ts
 * import { type FetchLike, withRetry } from '@floodgate/client';
 *
 * declare const token: string;
 * const authed: FetchLike = (input, init) => {
 *   const headers = new Headers(init?.headers);
 *   headers.set('Authorization', `Bearer ${token}`);
 *   return fetch(input, { ...init, headers });
 * };
 * const api = withRetry(authed);
 * ```
 * @public
 */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

/**
 * Options of `withRetry` and `fetchWithRetry`: the shared {@link RetryOptions} and which
 * responses and methods are retried, and pacing.
 * @example
 * ```ts
 * import { type FetchRetryOptions, withRetry } from '@floodgate/client';
 *
 * const options: FetchRetryOptions = {
 *   statuses: [429, 502, 503],
 *   methods: ['GET', 'PUT'],
 *   pacing: true,
 *   maxDelayMs: 30_000,
 * };
 * const api = withRetry(fetch, options);
 * ```
 * @public
 */
export interface FetchRetryOptions extends RetryOptions {
  /**
   * Response statuses that are retried.
   * @default [429, 503]
   */
  readonly statuses?: readonly number[];
  /**
   * Methods that may be retried. POST and PATCH are left out on purpose: a retried POST can
   * charge a card twice. A request carrying an `Idempotency-Key` header is retried whatever
   * its method.
   * @default ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']
   */
  readonly methods?: readonly string[];
  /**
   * Space requests per origin from the `RateLimit` headers the server sends, so that it does not
   * have to refuse any: `true` for a pacer of this instance's own, or a shared `Pacer` (or a
   * subclass, such as the token-aware `ModelApiPacer` of `@floodgate/client/model-apis`).
   * @default false
   */
  readonly pacing?: boolean | Pacer;
  /**
   * Reads the wait a refused response asks for. Replace it to read headers this package does
   * not know by default, such as `modelApiDelay` from `@floodgate/client/model-apis` (model
   * APIs' `retry-after-ms` and `x-ratelimit-*` / `anthropic-ratelimit-*`).
   * @default serverDelay
   * @beta
   */
  readonly serverDelay?: ServerDelayReader;
}

const DEFAULT_METHODS = ['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE'];

interface Prepared {
  readonly retry: ResolvedOptions;
  readonly statuses: ReadonlySet<number>;
  readonly methods: ReadonlySet<string>;
  readonly pacer: Pacer | undefined;
  readonly delay: ServerDelayReader;
}

function prepare(options: FetchRetryOptions, ownBudget: boolean): Prepared {
  const budget = options.budget ?? (ownBudget ? new RetryBudget() : false);
  const retry = resolveOptions({ ...options, budget }, ownBudget ? 'withRetry' : 'fetchWithRetry');
  const statuses = options.statuses ?? [429, 503];
  const methods = options.methods ?? DEFAULT_METHODS;
  if (!Array.isArray(statuses) || !statuses.every((s) => Number.isInteger(s))) {
    throw invalidOption('statuses must be an array of integer status codes');
  }
  if (!Array.isArray(methods) || !methods.every((m) => typeof m === 'string')) {
    throw invalidOption('methods must be an array of method names');
  }
  const delay = options.serverDelay ?? serverDelay;
  if (typeof delay !== 'function') {
    throw invalidOption('serverDelay must be a function');
  }
  const pacing = options.pacing ?? false;
  // Checked by shape, not instanceof: a Pacer from another copy of this package paces as well.
  if (typeof pacing !== 'boolean' && typeof pacing?.reserve !== 'function') {
    throw invalidOption('pacing must be a boolean or a Pacer (createPacer)');
  }
  return {
    retry,
    statuses: new Set(statuses),
    methods: new Set(methods.map((m) => m.toUpperCase())),
    pacer: pacing === true ? new Pacer() : pacing || undefined,
    delay,
  };
}

function isRequest(input: unknown): input is Request {
  return typeof Request !== 'undefined' && input instanceof Request;
}

/** The origin pacing keys on; relative URLs resolve against the page, where there is one. */
function originOf(input: string | URL | Request): string | undefined {
  try {
    const href = isRequest(input) ? input.url : String(input);
    const base = (globalThis as { location?: { href?: string } }).location?.href;
    return new URL(href, base).origin;
  } catch {
    return undefined;
  }
}

/**
 * A body that is read as it is sent (a `ReadableStream`, an async iterable such as a Node
 * `Readable` or an async generator) is gone after one attempt; everything else fetch accepts
 * (strings, bytes, `Blob`, `FormData`, `URLSearchParams`) can be sent again.
 */
function isStream(body: unknown): boolean {
  return (
    typeof body === 'object' &&
    body !== null &&
    ((typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) ||
      typeof (body as { [Symbol.asyncIterator]?: unknown })[Symbol.asyncIterator] === 'function')
  );
}

async function call(
  fetchFn: FetchLike,
  input: string | URL | Request,
  init: RequestInit | undefined,
  p: Prepared,
): Promise<Response> {
  const request = isRequest(input) ? input : undefined;
  const method = (init?.method ?? request?.method ?? 'GET').toUpperCase();
  const headers = new Headers(init?.headers ?? request?.headers);
  const stream = isStream(init?.body);
  const retryable = p.methods.has(method) || headers.has('idempotency-key');
  // fetch refuses a streamed body without `duplex: 'half'` (Node, Chromium); it says the
  // response is read only once the body is sent, the only mode fetch has.
  const sendInit =
    stream && !('duplex' in (init as object)) ? { ...init, duplex: 'half' as const } : init;
  const origin = p.pacer ? originOf(input) : undefined;
  const o = p.retry;
  // Any of the caller's signals cancels (a Request always has one, which never aborts unless
  // its creator made it so).
  const signals = [init?.signal, o.signal, request?.signal].filter((s): s is AbortSignal => !!s);

  const attempt: Attempt<Response> = async (n, signal, deadline) => {
    let seq = 0;
    if (p.pacer && origin !== undefined) {
      // A paced wait obeys maxDelayMs and the deadline, as a server-given one does; one that
      // would be refused is not reserved, so it does not hold back the calls after it.
      const now = Date.now();
      const most = o.onMaxDelay === 'throw' ? o.maxDelayMs : Infinity;
      const slot = p.pacer.reserve(origin, now, Math.min(most, deadline - now), input, init);
      if (slot.seq === 0) {
        boundedDelay(slot.waitMs, o, { attempt: n });
        checkDeadline(slot.waitMs, deadline, o, { attempt: n });
      }
      seq = slot.seq;
      await sleep(Math.min(slot.waitMs, o.maxDelayMs), signal);
    }
    let response: Response;
    try {
      response = await fetchFn(request ? request.clone() : input, { ...sendInit, signal });
    } catch (error) {
      if (signal.aborted || !retryable) throw error;
      return {
        kind: 'retry',
        reason: 'network-error',
        error,
        giveUp: { error },
        notRetried: stream
          ? new RetryBodyNotReplayableError({ attempt: n, cause: error })
          : undefined,
      };
    }
    if (p.pacer && origin !== undefined) {
      p.pacer.observe(origin, seq, response.headers, Date.now());
    }
    if (!retryable || !p.statuses.has(response.status)) return { kind: 'done', value: response };
    const server = p.delay(response.headers, Date.now());
    return {
      kind: 'retry',
      reason: 'status',
      response,
      serverDelayMs: server?.delayMs,
      source: server?.source,
      giveUp: { value: response },
      release: () => release(response),
      notRetried: stream ? new RetryBodyNotReplayableError({ attempt: n, response }) : undefined,
    };
  };
  return runWithRetries(attempt, o, signals);
}

/** An unread body pins a connection (and in undici a socket) until garbage collection. */
async function release(response: Response): Promise<void> {
  try {
    await response.body?.cancel();
  } catch {
    // Already read or locked by an onRetry hook: nothing left to free here.
  }
}

/**
 * Wraps a fetch so that 429 and 503 answers (and network errors of idempotent requests) are
 * retried the way the server asked. One instance shares one retry budget and, with `pacing`,
 * one pacer.
 * Bad options throw a `RetryError` (`INVALID_OPTION`) here, before any request.
 * @example
 * ```ts
 * import { withRetry } from '@floodgate/client';
 *
 * const api = withRetry(fetch, { maxDelayMs: 30_000, pacing: true });
 * const res = await api('https://api.example.com/items', { signal: AbortSignal.timeout(60_000) });
 * ```
 * @public
 */
export function withRetry(
  fetchFn: FetchLike = globalThis.fetch,
  options: FetchRetryOptions = {},
): FetchLike {
  if (typeof fetchFn !== 'function') {
    throw invalidOption('withRetry needs a fetch function');
  }
  const prepared = prepare(options, true);
  return (input, init) => call(fetchFn, input, init, prepared);
}

/**
 * One fetch with retries, through `globalThis.fetch` (or `options.fetch`). Pass a `budget`
 * or a `Pacer` to share them between calls.
 * @example
 * ```ts
 * import { fetchWithRetry } from '@floodgate/client';
 *
 * const res = await fetchWithRetry('https://api.example.com/items', undefined, { retries: 5 });
 * const items: unknown = await res.json();
 * ```
 * @public
 */
export async function fetchWithRetry(
  input: string | URL | Request,
  init?: RequestInit,
  options: FetchRetryOptions & {
    /** The fetch to call. @default globalThis.fetch */
    readonly fetch?: FetchLike;
  } = {},
): Promise<Response> {
  const prepared = prepare(options, false);
  return call(options.fetch ?? globalThis.fetch, input, init, prepared);
}
