// A Worker limited per client IP with Floodgate, its counts in Durable Objects: every isolate,
// in every location, decides on the same count, so 20 per IP means 20. Run locally with
// `wrangler dev` (wrangler.jsonc beside this file); the package's tests run it in workerd.
import { DurableObject } from 'cloudflare:workers';
import { createLimiter, type Limiter, slidingWindowLog } from '@floodgate/core';
import { type RateLimitEnv, rateLimit } from '@floodgate/http/hono';
import { Hono } from 'hono';
import { DurableObjectStore, floodgateObject } from '../src/index.js';

/** The class that holds the counts: bound as FLOODGATE, SQLite-backed (wrangler.jsonc). */
export class FloodgateObject extends floodgateObject(DurableObject) {}

interface Env {
  FLOODGATE: DurableObjectNamespace<FloodgateObject>;
}

// One limiter per isolate, made at its first request: bindings arrive with the request, and a
// limiter kept across requests keeps its blocked-key cache (a denied IP is answered here, without
// a round trip to its object, until its retry time).
let limiter: Limiter | undefined;
const limiterFor = (env: Env): Limiter =>
  (limiter ??= createLimiter({
    store: new DurableObjectStore(env.FLOODGATE),
    policy: slidingWindowLog({ name: 'per-ip', limit: 20, window: '1h' }),
    prefix: 'ip',
    // The default is 250 ms; a local workerd under a burst of hundreds of requests on a busy
    // machine can take longer, and a timeout would decide on the per-isolate fallback instead.
    timeoutMs: 5_000,
  }));

const app = new Hono<{ Bindings: Env } & RateLimitEnv>();
app.use(
  rateLimit({
    limiter: (request) => limiterFor(request.raw.env),
    // Set by Cloudflare's edge for every request: the client's address.
    getAddress: (c) => c.req.header('cf-connecting-ip'),
  }),
);
app.get('/', (c) => c.text(`ok, ${c.get('rateLimit')?.remaining} left`));

export default app;
