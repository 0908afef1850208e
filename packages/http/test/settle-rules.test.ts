// Settling beyond one limiter and one report, on the node:http adapter with real requests:
// several rules and a per-request policy choice each settle their own reservation, stacked
// middlewares share the request's meter, the `settle` function and skipFailedRequests decide
// the actual, a request this middleware refuses gives its reservations back, and failures to
// settle go to `onError`. Also: without `settle`, nothing changes (a per-policy `cost` is charged
// with `limit`, and there is no meter).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createLimiter, fixedWindow, isFloodgateError } from '@floodgate/core';
import { afterEach, describe, expect, it } from 'vitest';
import { type RequestUsage, usageOf } from '../src/index.js';
import { type NodeRateLimiter, rateLimit } from '../src/node/index.js';
import { type App, listen } from './concurrency-apps.js';
import { tokenLimiter, used } from './support/settle.js';
import { steadyMemoryStore } from './support/stores.js';

const opened: App[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((a) => a.close()));
});

type Handler = (req: IncomingMessage, res: ServerResponse, usage: RequestUsage | undefined) => void;

/** A node:http app: the middlewares in order, then `handler`; each request's meter is kept. */
async function serve(limits: NodeRateLimiter[], handler: Handler) {
  const meters: (RequestUsage | undefined)[] = [];
  const app = await listen(
    createServer(async (req, res) => {
      for (const limit of limits) if (!(await limit(req, res))) return;
      const usage = usageOf(req);
      meters.push(usage);
      handler(req, res, usage);
    }),
  );
  opened.push(app);
  const settled = async (n: number) => {
    for (let i = 0; i < 400 && meters.length <= n; i++) await new Promise((r) => setTimeout(r, 5));
    await meters[n]?.settled;
  };
  return { url: app.url, meters, settled };
}

const key = () => 'client';
const ok: Handler = (_req, res) => res.end('ok');

describe('settle: several limiters', () => {
  it('each rule settles its own reservation from one report', async () => {
    const perKey = tokenLimiter();
    const perIp = createLimiter({
      store: steadyMemoryStore(),
      policy: fixedWindow({ name: 'ip-tokens', limit: 1_000, window: '1h' }),
    });
    const limit = rateLimit({
      rules: [
        { limiter: perKey, key, cost: { requests: 1, tokens: 100 } },
        { limiter: perIp, key, cost: { 'ip-tokens': 50 } },
      ],
      settle: true,
    });
    const app = await serve([limit], (_req, res, usage) => {
      usage?.add({ tokens: 20, 'ip-tokens': 20 });
      usage?.add({ tokens: 1, 'ip-tokens': 1 });
      res.end('ok');
    });
    expect((await fetch(app.url)).status).toBe(200);
    await app.settled(0);
    expect(await used(perKey)).toEqual({ requests: 1, tokens: 21 });
    expect(await used(perIp)).toEqual({ 'ip-tokens': 21 });
  });

  it('a policy chosen per request settles on the limiter built for it', async () => {
    const store = steadyMemoryStore();
    const free = fixedWindow({ name: 'free', limit: 1_000, window: '1h' });
    const pro = fixedWindow({ name: 'pro', limit: 5_000, window: '1h' });
    const limit = rateLimit({
      store,
      policy: (request) => (request.header('x-plan') === 'pro' ? pro : free),
      key,
      cost: 400,
      settle: true,
    });
    const app = await serve([limit], (req, res, usage) => {
      usage?.report(req.headers['x-plan'] === 'pro' ? 30 : 7);
      res.end('ok');
    });
    expect((await fetch(app.url, { headers: { 'x-plan': 'pro' } })).status).toBe(200);
    await app.settled(0);
    expect((await fetch(app.url)).status).toBe(200);
    await app.settled(1);
    expect(await used(createLimiter({ store, policy: pro }))).toEqual({ pro: 30 });
    expect(await used(createLimiter({ store, policy: free }))).toEqual({ free: 7 });
  });

  it('stacked middlewares share the meter; `settled` waits for both', async () => {
    const outer = tokenLimiter();
    const inner = createLimiter({
      store: steadyMemoryStore(),
      policy: fixedWindow({ name: 'route-tokens', limit: 1_000, window: '1h' }),
    });
    const app = await serve(
      [
        rateLimit({ limiter: outer, key, cost: { requests: 1, tokens: 100 }, settle: true }),
        rateLimit({ limiter: inner, key, cost: 100, settle: true }),
      ],
      (_req, res, usage) => {
        usage?.report({ tokens: 12, 'route-tokens': 12 });
        res.end('ok');
      },
    );
    expect((await fetch(app.url)).status).toBe(200);
    await app.settled(0);
    expect(await used(outer)).toEqual({ requests: 1, tokens: 12 });
    expect(await used(inner)).toEqual({ 'route-tokens': 12 });
  });
});

describe('settle: what the actual cost is', () => {
  it('the settle function decides: 0 for a server error gives everything back', async () => {
    const limiter = tokenLimiter();
    const seen: unknown[] = [];
    const limit = rateLimit({
      limiter,
      key,
      cost: { requests: 1, tokens: 100 },
      settle: (context) => {
        seen.push({ status: context.status, aborted: context.aborted, reported: context.reported });
        return context.status === 500 ? 0 : undefined;
      },
    });
    const app = await serve([limit], (req, res, usage) => {
      usage?.add({ tokens: 9 });
      res.statusCode = req.url === '/fail' ? 500 : 200;
      res.end();
    });
    expect((await fetch(`${app.url}/fail`)).status).toBe(500);
    await app.settled(0);
    expect(await used(limiter)).toEqual({ requests: 0, tokens: 0 });
    expect((await fetch(`${app.url}/`)).status).toBe(200);
    await app.settled(1);
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 9 });
    expect(seen).toEqual([
      { status: 500, aborted: false, reported: { tokens: 9 } },
      { status: 200, aborted: false, reported: { tokens: 9 } },
    ]);
  });

  it('skipFailedRequests cancels the reservation of a failed response', async () => {
    const limiter = tokenLimiter();
    const limit = rateLimit({
      limiter,
      key,
      cost: { requests: 1, tokens: 100 },
      settle: true,
      skipFailedRequests: true,
    });
    const app = await serve([limit], (req, res, usage) => {
      usage?.add({ tokens: 9 });
      res.statusCode = req.url === '/fail' ? 503 : 200;
      res.end();
    });
    expect((await fetch(`${app.url}/fail`)).status).toBe(503);
    await app.settled(0);
    expect(await used(limiter)).toEqual({ requests: 0, tokens: 0 });
    expect((await fetch(`${app.url}/`)).status).toBe(200);
    await app.settled(1);
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 9 });
  });

  it('a request refused by a later rule gives back what the earlier rule reserved', async () => {
    const perKey = tokenLimiter();
    const strict = createLimiter({
      store: steadyMemoryStore(),
      policy: fixedWindow({ name: 'strict', limit: 1, window: '1h' }),
    });
    const limit = rateLimit({
      rules: [
        { limiter: perKey, key, cost: { requests: 1, tokens: 100 } },
        { limiter: strict, key, cost: 1 },
      ],
      settle: true,
    });
    const app = await serve([limit], ok);
    expect((await fetch(app.url)).status).toBe(200);
    await app.settled(0);
    expect((await fetch(app.url)).status).toBe(429);
    // The 429 never reaches a handler, so no meter to wait on: poll until the cancel landed.
    for (let i = 0; i < 400 && (await used(perKey)).tokens !== 100; i++) {
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(await used(perKey)).toEqual({ requests: 1, tokens: 100 });
    expect(await used(strict)).toEqual({ strict: 1 });
  });

  it('a settlement that fails goes to onError, and the estimate stands', async () => {
    const limiter = tokenLimiter();
    const errors: unknown[] = [];
    const limit = rateLimit({
      limiter,
      key,
      cost: { requests: 1, tokens: 100 },
      settle: true,
      settleWithinMs: 1,
      onError: (error) => errors.push(error),
    });
    const app = await serve([limit], (_req, res, usage) => {
      usage?.add({ tokens: 5 });
      setTimeout(() => res.end('late'), 30);
    });
    expect(await (await fetch(app.url)).text()).toBe('late');
    await app.settled(0);
    expect(errors.map((e) => isFloodgateError(e) && e.code)).toEqual(['RESERVATION_EXPIRED']);
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 100 });
  });
});

describe('without settle', () => {
  it('a per-policy cost is charged with limit(), and there is no meter', async () => {
    const limiter = tokenLimiter();
    const app = await serve([rateLimit({ limiter, key, cost: { requests: 1, tokens: 40 } })], ok);
    expect((await fetch(app.url)).status).toBe(200);
    expect(app.meters).toEqual([undefined]);
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 40 });
  });
});
