// The per-request side of the Fastify plugin: finding a route's limit, running it in a
// callback-style hook (no promise of our own per request: Fastify's runner takes `done`), and
// applying the outcome to the reply.
import type {
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  HookHandlerDoneFunction,
} from 'fastify';
import type { Outcome, RateLimitEngine } from '../shared/engine.js';
import type { FrameworkSettings, TrustProxy } from '../shared/framework.js';
import { closeSignal, incomingView, pathOf, settleOnFinish } from '../shared/node-io.js';
import { mergeExposeHeaders } from '../shared/response.js';
import { createSlot } from '../shared/slot.js';
import type { FastifyHook } from './hook.js';

/** An engine and the hook it runs in. */
export interface Limited {
  readonly engine: RateLimitEngine;
  readonly hook: FastifyHook;
}

/** What a route's requests need, found once per route. */
export interface RouteLimit {
  readonly limited: Limited;
  readonly framework: FrameworkSettings;
  readonly route: string | undefined;
}

/** The route config Fastify keeps per route: the user's `config`, with `url` and `method`. */
export interface ContextConfig {
  readonly url?: string;
  readonly method?: string | readonly string[];
}

// Fastify's route context under its (unregistered) symbol: `request.routeOptions` builds a
// dozen-field object on every read, while all the plugin needs is the context's `config`. Used
// only once checked against that public getter; without it, the getter it is.
let contextKey: symbol | null | undefined;

function findContextKey(request: FastifyRequest): symbol | null {
  const symbol = Object.getOwnPropertySymbols(request).find(
    (s) => s.description === 'fastify.context',
  );
  if (symbol === undefined) return null;
  const context = (request as unknown as Record<symbol, { config?: unknown } | undefined>)[symbol];
  return context?.config === request.routeOptions.config ? symbol : null;
}

/** The route's config object, the one `request.routeOptions.config` returns. */
export function routeConfigOf(request: FastifyRequest): ContextConfig | undefined {
  if (contextKey === undefined) contextKey = findContextKey(request);
  if (contextKey !== null) {
    const context = (request as unknown as Record<symbol, { config?: ContextConfig } | undefined>)[
      contextKey
    ];
    // A request of another copy of Fastify in the process has a symbol of its own: the public
    // getter serves it.
    if (context !== undefined) return context.config;
  }
  return request.routeOptions.config as ContextConfig | undefined;
}

const frameworks = new WeakMap<object, FrameworkSettings>();

/**
 * Fastify's `trustProxy`, which `ipKey()` follows when given none of its own. Fastify keeps its
 * options under an unregistered symbol and exposes no compiled trust function, so the setting
 * is found by the symbol's description; without it, the setting is taken as unset.
 */
export function frameworkOf(server: FastifyInstance): FrameworkSettings {
  let framework = frameworks.get(server);
  if (framework !== undefined) return framework;
  let trustProxy: TrustProxy | undefined;
  for (let o: object | null = server; o !== null && trustProxy === undefined; ) {
    const symbol = Object.getOwnPropertySymbols(o).find((s) => s.description === 'fastify.options');
    if (symbol !== undefined) {
      trustProxy = (o as Record<symbol, { trustProxy?: TrustProxy } | undefined>)[symbol]
        ?.trustProxy;
      break;
    }
    o = Object.getPrototypeOf(o) as object | null;
  }
  framework = trustProxy === undefined ? { name: 'Fastify' } : { name: 'Fastify', trustProxy };
  frameworks.set(server, framework);
  return framework;
}

// Lower case, as Fastify keeps (and sends) every reply header: it lowercases what it is given.
const EXPOSE = 'access-control-expose-headers';
const exposeNames = createSlot<readonly string[]>('floodgate.expose');

function applyOutcome(reply: FastifyReply, outcome: Outcome): void {
  const headers = outcome.headers;
  for (const name in headers) reply.header(name, headers[name]);
  if (outcome.expose.length > 0) {
    exposeNames.set(reply.request, outcome.expose);
    const current = reply.getHeader(EXPOSE);
    reply.header(
      EXPOSE,
      mergeExposeHeaders(current === undefined ? undefined : String(current), outcome.expose),
    );
  }
}

/**
 * The `onSend` hook: CORS plugins may (re)write the expose list after our hook, so it is merged
 * once more at send time, and written only when that changes it.
 */
export function mergeExposeOnSend(
  request: FastifyRequest,
  reply: FastifyReply,
  payload: unknown,
  done: (error: Error | null, payload?: unknown) => void,
): void {
  const names = exposeNames.get(request);
  if (names !== undefined) {
    const current = reply.getHeader(EXPOSE);
    const merged = mergeExposeHeaders(current === undefined ? undefined : String(current), names);
    if (merged !== current) reply.header(EXPOSE, merged);
  }
  done(null, payload);
}

/** What the outcome asks of the reply; `done` is called only when Fastify is to go on. */
function applyDecided(
  outcome: Outcome | undefined,
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  try {
    if (outcome === undefined) {
      // The client is gone: take the reply over so Fastify runs nothing more for it.
      reply.hijack();
      reply.raw.destroy();
      return;
    }
    if (outcome.decision !== undefined) request.rateLimit = outcome.decision;
    applyOutcome(reply, outcome);
    if (outcome.action === 'respond') {
      // Answered: the hook chain ends here (a callback hook that replies does not call done).
      reply.code(outcome.status).send(outcome.body);
      return;
    }
    if (outcome.settle !== undefined) settleOnFinish(reply.raw, outcome.settle);
  } catch (error) {
    done(error as Error);
    return;
  }
  done();
}

/** Runs one route's limit for one request, then calls `done` unless it answered. */
export function limitRequest(
  limit: RouteLimit,
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  let decided: Promise<Outcome | undefined>;
  try {
    const view = incomingView(
      request.raw,
      request,
      pathOf(request.url),
      limit.route,
      limit.framework,
    );
    decided = limit.limited.engine.admit(view, () => closeSignal(reply.raw));
  } catch (error) {
    done(error as Error);
    return;
  }
  decided.then(
    (outcome) => applyDecided(outcome, request, reply, done),
    // As Fastify does for a hook's promise rejected without a reason: still an error.
    (error: unknown) => done((error ?? new Error('the rate limit hook failed')) as Error),
  );
}
