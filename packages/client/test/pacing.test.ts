import { createLimiter, fixedWindow, type Policy, tokenBucket } from '@floodgate/core';
import { formatRateLimitHeaders } from '@floodgate/core/headers';
import { MemoryStore } from '@floodgate/memory';
import { afterEach, describe, expect, it } from 'vitest';
import { createPacer, type FetchLike, withRetry } from '../src/index.js';
import { startServer, type TestServer } from './server.js';

let server: TestServer | undefined;
afterEach(() => server?.close());

/** A real limiter behind a real server, answering with draft-8 RateLimit headers. */
async function limitedServer(policy: Policy | Policy[]) {
  const limiter = createLimiter({ store: new MemoryStore(), policy, prefix: 'pacing' });
  const statuses: number[] = [];
  server = await startServer((_req, res) => {
    limiter.limit('client').then((d) => {
      statuses.push(d.allowed ? 200 : 429);
      res.writeHead(d.allowed ? 200 : 429, formatRateLimitHeaders(d)).end();
    });
  });
  return { url: `${server.url}/`, statuses };
}

/** `total` requests, `concurrency` at a time. */
async function load(client: FetchLike, url: string, total: number, concurrency: number) {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < total) {
      next += 1;
      const res = await client(url);
      await res.arrayBuffer();
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

// A 10 req/s server, as the issue states it: 200 requests take about 19 s.
const RATE = tokenBucket({ limit: 10, interval: '1s', burst: 10, name: 'rate' });

describe('pacing', () => {
  it('200 requests against a 10 req/s limiter: zero 429s', async () => {
    const { url, statuses } = await limitedServer(RATE);
    const started = Date.now();
    await load(withRetry(fetch, { pacing: true, retries: 0 }), url, 200, 4);
    expect(statuses).toHaveLength(200);
    expect(statuses.filter((s) => s === 429)).toHaveLength(0);
    // 190 beyond the burst at 10/s cannot take less than 19 s without a refusal.
    expect(Date.now() - started).toBeGreaterThanOrEqual(18_900);
  }, 60_000);

  it('without pacing the same load is refused (so the test above can fail)', async () => {
    const { url, statuses } = await limitedServer(RATE);
    await load(withRetry(fetch, { retries: 0 }), url, 200, 4);
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
  });

  it('two policies in the headers: zero 429s', async () => {
    const { url, statuses } = await limitedServer([
      tokenBucket({ limit: 50, interval: '1s', burst: 50, name: 'burst' }),
      fixedWindow({ limit: 20, window: '1s', name: 'window' }),
    ]);
    const pacer = createPacer();
    await load(withRetry(fetch, { pacing: pacer, retries: 0 }), url, 50, 3);
    expect(statuses).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(0);
  });
});
