import { createLimiter, type Limiter, slidingWindowLog, tokenBucket } from '@floodgate/core';
import { type RedisServer, startRedisServer } from '@floodgate/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type NodeRedisClientLike, NodeRedisStore } from '../src/index.js';
import { CLIENT_KINDS, type Connected } from './clients.js';

// Two app servers whose clocks disagree by an hour, sharing one Redis (and using two different
// node-redis generations, as a rolling upgrade would).
const HOUR = 3_600_000;
const policies = [
  tokenBucket({ limit: 5, interval: '1h' }),
  slidingWindowLog({ limit: 8, window: '1h' }),
];

let server: RedisServer;
let a: Connected<NodeRedisClientLike>;
let b: Connected<NodeRedisClientLike>;
beforeAll(async () => {
  server = await startRedisServer();
  a = await CLIENT_KINDS[0]!.client(server.url);
  b = await CLIENT_KINDS[2]!.client(server.url);
});
afterAll(async () => {
  await a?.close();
  await b?.close();
  await server?.stop();
});

function pair(clock: 'server' | 'client', prefix: string): [Limiter, Limiter] {
  const make = (client: NodeRedisClientLike, skew: number): Limiter =>
    createLimiter({
      store: new NodeRedisStore(client, { clock, now: () => Date.now() + skew }),
      policy: policies,
      prefix,
      onStoreError: 'throw',
      blockCache: false,
    });
  return [make(a.client, 0), make(b.client, HOUR)];
}

const summary = (d: { allowed: boolean; remaining: number }): string =>
  `${d.allowed}/${d.remaining}`;

describe('clock: server', () => {
  it('gives callers whose clocks differ by an hour the decisions one clock gives', async () => {
    const [early, late] = pair('server', 'skew-server');
    const [single] = pair('server', 'skew-single');
    const shared: string[] = [];
    const alone: string[] = [];
    for (let i = 0; i < 12; i++) {
      shared.push(summary(await (i % 2 === 0 ? early : late).limit('k')));
      alone.push(summary(await single.limit('k')));
    }
    expect(shared).toEqual(alone);
    expect(shared.filter((s) => s.startsWith('true'))).toHaveLength(5);
    const [d1, d2] = [await early.limit('k'), await late.limit('k')];
    expect(Math.abs(d1.retryAfterMs - d2.retryAfterMs)).toBeLessThan(1000);
  });
});

describe('clock: client (the contrast)', () => {
  it('lets the caller an hour ahead see a refilled bucket: the skew bends the limit', async () => {
    const [early, late] = pair('client', 'skew-client');
    let admitted = 0;
    for (let i = 0; i < 6; i++) if ((await early.limit('k')).allowed) admitted++;
    for (let i = 0; i < 6; i++) if ((await late.limit('k')).allowed) admitted++;
    expect(admitted).toBe(10);
  });
});
