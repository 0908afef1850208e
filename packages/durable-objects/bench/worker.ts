// The benchmark's Worker: runs decisions through a DurableObjectStore from inside workerd (the
// Worker → object RPC → SQLite → reply path a deployed Worker takes) and times them with the
// isolate's clock, which locally runs in real time. Beside it, the peer: hono-rate-limiter's
// Durable Object store (`@hono-rate-limiter/cloudflare`), bundled in from the repository's bench/
// package by bench/run.ts, its objects bound as PEER, at the store level and in a Hono app.
/// <reference path="./peer.d.ts" />
import { DurableObject } from 'cloudflare:workers';
import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
import { evaluateAll, type PolicyState, type StoreCall } from '@floodgate/core/store';
import { headerKey } from '@floodgate/http';
import { type RateLimitEnv, rateLimit } from '@floodgate/http/hono';
import { MemoryStore } from '@floodgate/memory';
import { DurableObjectStore as PeerStore } from '@hono-rate-limiter/cloudflare';
import { Hono, type MiddlewareHandler } from 'hono';
import { rateLimiter } from 'hono-rate-limiter';
import { DurableObjectStore, floodgateObject } from '../src/index.js';
import type { WireCall } from '../src/wire.js';

export class FloodgateObject extends floodgateObject(DurableObject) {}
// The peer's object class, as its README binds it: one object per key.
export { DurableObjectRateLimiter } from '@hono-rate-limiter/cloudflare';

// The transport question, alone: one decision's work on state in memory (no storage), reached
// by RPC (which needs `extends DurableObject`) or by fetch with JSON (which a plain class takes).
const states = new Map<string, PolicyState>();
function decideInMemory(call: WireCall) {
  const { results, writes } = evaluateAll(
    call as StoreCall,
    call.keys.map((k) => states.get(k)),
    Date.now(),
  );
  writes.forEach((w, i) => {
    if (w) states.set(call.keys[i]!, w.state);
  });
  return results;
}
export class ViaRpc extends DurableObject {
  decide(call: WireCall) {
    return decideInMemory(call);
  }
}
export class ViaFetch {
  async fetch(request: Request): Promise<Response> {
    return Response.json(decideInMemory((await request.json()) as WireCall));
  }
}

interface Env {
  FLOODGATE: DurableObjectNamespace<FloodgateObject>;
  VIA_RPC: DurableObjectNamespace<ViaRpc>;
  VIA_FETCH: DurableObjectNamespace;
  PEER: DurableObjectNamespace;
}

/** `n` one-policy calls to one object through `transport`, one at a time: calls per second. */
async function transport(env: Env, kind: 'rpc' | 'fetch', n: number): Promise<number> {
  const call: WireCall = {
    keys: ['bench:{t}:fw'],
    policies: [policy],
    cost: 1,
    mode: 'limit',
  };
  const start = performance.now();
  for (let i = 0; i < n; i++) {
    if (kind === 'rpc') await env.VIA_RPC.get(env.VIA_RPC.idFromName('t')).decide(call);
    else {
      const stub = env.VIA_FETCH.get(env.VIA_FETCH.idFromName('t'));
      const res = await stub.fetch('http://object/', {
        method: 'POST',
        body: JSON.stringify(call),
      });
      await res.json();
    }
  }
  return Math.round((n / (performance.now() - start)) * 1000);
}

interface Run {
  /** Decisions to make. */
  readonly n: number;
  /** Decisions in flight at once. */
  readonly concurrency: number;
  /** Identities, taken round-robin. */
  readonly identities: number;
  /** Identity names start with this (a new one makes every identity cold). */
  readonly tag: string;
  /** `peer`: hono-rate-limiter's DurableObjectStore, `increment(key)` per decision. */
  readonly store: 'per-identity' | 'shards' | 'memory' | 'peer';
  readonly shards?: number;
}

// Never denies within a run; its state lives an hour, as a typical limit's does. The peer gets
// the same: a fixed window of an hour, the same limit.
const LIMIT = 1_000_000_000;
const WINDOW_MS = 3_600_000;
const policy = fixedWindow({ limit: LIMIT, window: '1h' });
const memory = new MemoryStore();

/** One decision on `id`: allowed or not. */
function decideFor(env: Env, r: Run): (id: string) => Promise<boolean> {
  if (r.store === 'peer') {
    // What hono-rate-limiter's middleware does per request: increment, then compare.
    const store = new PeerStore({ namespace: env.PEER });
    store.init({ windowMs: WINDOW_MS });
    return async (id) => (await store.increment(id)).totalHits <= LIMIT;
  }
  const store =
    r.store === 'memory'
      ? memory
      : new DurableObjectStore(env.FLOODGATE, r.store === 'shards' ? { shards: r.shards } : {});
  const limiter = createLimiter({
    store,
    policy,
    prefix: 'bench',
    blockCache: false,
    timeoutMs: false,
  });
  return async (id) => (await limiter.limit(id)).allowed;
}

// The whole-app comparison: two Hono apps, each limiting by the `x-key` header on a fixed window
// (same limit, never denied), one object per key. Each keeps its limiter per isolate, made at
// the first request (bindings arrive with it). Floodgate's waits for its object however long
// it takes (no timeout, so no fallback decision), as the peer does.
let appLimiter: Limiter | undefined;
const floodgateApp = new Hono<{ Bindings: Env } & RateLimitEnv>();
floodgateApp.use(
  rateLimit({
    limiter: (request) =>
      (appLimiter ??= createLimiter({
        store: new DurableObjectStore(request.raw.env.FLOODGATE),
        policy,
        prefix: 'app',
        timeoutMs: false,
      })),
    // Every value is a real key here (the peer checks none either): no warning about it.
    key: headerKey('x-key', { verify: () => true }),
  }),
);
floodgateApp.get('*', (c) => c.text('ok'));

let peerMiddleware: MiddlewareHandler | undefined;
const peerApp = new Hono<{ Bindings: Env }>();
peerApp.use((c, next) => {
  peerMiddleware ??= rateLimiter({
    windowMs: WINDOW_MS,
    limit: LIMIT,
    keyGenerator: (c) => c.req.header('x-key') ?? '',
    store: new PeerStore({ namespace: c.env.PEER }),
  });
  return peerMiddleware(c, next);
});
peerApp.get('*', (c) => c.text('ok'));

const quantile = (sorted: number[], q: number): number =>
  sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const path = new URL(request.url).pathname;
    if (path.startsWith('/app/floodgate')) return floodgateApp.fetch(request, env, ctx);
    if (path.startsWith('/app/peer')) return peerApp.fetch(request, env, ctx);
    if (path === '/rpc' || path === '/fetch') {
      return Response.json({ perSecond: await transport(env, path.slice(1) as 'rpc', 5_000) });
    }
    const r = (await request.json()) as Run;
    const decide = decideFor(env, r);
    const latencies: number[] = [];
    let next = 0;
    let admitted = 0;
    const lane = async () => {
      while (next < r.n) {
        const id = `${r.tag}-${next++ % r.identities}`;
        const t = performance.now();
        if (await decide(id)) admitted++;
        latencies.push(performance.now() - t);
      }
    };
    const start = performance.now();
    await Promise.all(Array.from({ length: r.concurrency }, lane));
    const ms = performance.now() - start;
    latencies.sort((a, b) => a - b);
    return Response.json({
      decisions: r.n,
      admitted,
      perSecond: Math.round((r.n / ms) * 1000),
      p50Ms: quantile(latencies, 0.5),
      p99Ms: quantile(latencies, 0.99),
    });
  },
};
