// `rateLimit({ cost, settle: true })` on every adapter, real servers and real requests: a request
// is admitted at its estimate (`limiter.reserve`), and once its response is done it is charged
// exactly what its handler reported through `usageOf`: at the end of a streamed (SSE) response,
// up to the abort when the client leaves mid-stream, at once for a plain response; with nothing
// reported, the estimate stands.
import { afterEach, describe, expect, it } from 'vitest';
import type { App } from './concurrency-apps.js';
import {
  ABORT_TOKENS,
  SETTLE_ADAPTERS,
  type SettleApp,
  STREAM_EVENTS,
  STREAM_TOKENS,
} from './settle-apps.js';
import { readThenAbort, tokenLimiter, used } from './support/settle.js';

const opened: App[] = [];
afterEach(async () => {
  await Promise.all(opened.splice(0).map((a) => a.close()));
});

const ESTIMATE = { requests: 1, tokens: 100 };

/** The meter of the app's `n`th request, once its handler ran; fails if there is none. */
async function settledMeter(app: SettleApp, n: number): Promise<void> {
  for (let i = 0; i < 400 && app.meters.length <= n; i++)
    await new Promise((r) => setTimeout(r, 5));
  const meter = app.meters[n];
  expect(meter, 'the handler found its usage meter').toBeDefined();
  await meter!.settled;
}

describe.each(Object.keys(SETTLE_ADAPTERS))('%s: settle', (name) => {
  async function setUp() {
    const limiter = tokenLimiter();
    const app = await SETTLE_ADAPTERS[name]!({
      limiter,
      key: () => 'client',
      cost: ESTIMATE,
      settle: true,
    });
    opened.push(app);
    return { app, limiter };
  }

  it('a streamed response is charged what the handler reported as it streamed', async () => {
    const { app, limiter } = await setUp();
    const res = await fetch(`${app.url}/stream`);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit')).toContain('"tokens"');
    expect(await res.text()).toBe(STREAM_EVENTS.map((e) => `data: ${e}\n\n`).join(''));
    await settledMeter(app, 0);
    // The reported tokens replace the estimate's 100; the request, not reported, stays at 1.
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 3 * STREAM_TOKENS });
    expect(app.meters[0]?.reported).toEqual({ tokens: 3 * STREAM_TOKENS });
  });

  it('a client that leaves mid-stream is charged what was reported up to then', async () => {
    const { app, limiter } = await setUp();
    const { status, text } = await readThenAbort(`${app.url}/abort`, 2, async () => {
      // Still streaming: the estimate holds the quota.
      expect(await used(limiter)).toEqual(ESTIMATE);
    });
    expect(status).toBe(200);
    expect(text).toBe('data: one\n\ndata: two\n\n');
    await settledMeter(app, 0);
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 2 * ABORT_TOKENS });
  });

  it('a plain response settles too; with nothing reported the estimate stands', async () => {
    const { app, limiter } = await setUp();
    const plain = await fetch(`${app.url}/plain`);
    expect([plain.status, await plain.text()]).toEqual([200, 'ok']);
    await settledMeter(app, 0);
    expect(await used(limiter)).toEqual({ requests: 1, tokens: 3 });
    const silent = await fetch(`${app.url}/silent`);
    expect([silent.status, await silent.text()]).toEqual([200, 'ok']);
    await settledMeter(app, 1);
    expect(app.meters[1]?.reported).toBeUndefined();
    expect(await used(limiter)).toEqual({ requests: 2, tokens: 3 + ESTIMATE.tokens });
  });
});
