// A fleet moving from 1.0 to 1.1 (`writeFormat: '1.0'`; docs/upgrading.md). A "1.0 process" here
// is 1.0 itself: its token bucket script (test/fixtures/floodgate-1.0-scripts.json, assembled by
// 1.0.0's code at 3f40d51) on the same key. Since 1.1 a token bucket whose burst is not its limit
// also stores its fill time, a fourth field 1.0's pattern does not match: 1.0's script fails on
// such a state, and a 1.0 limiter then decides by its fallback, each process on its own.

import { readFileSync } from 'node:fs';
import { createLimiter, type Policy, tokenBucket } from '@floodgate/core';
import { encodeScriptArgs } from '@floodgate/core/redis';
import {
  encodeIdentity,
  evaluatePolicy,
  type PolicyState,
  policyKey,
  type StoreCall,
} from '@floodgate/core/store';
import { rng, useRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IoRedisStore } from '../src/index.js';

const server = useRedisServer({ beforeAll, afterAll });
let redis: Redis;
beforeAll(() => {
  redis = new Redis(server().url);
});
afterAll(() => {
  redis?.disconnect();
});

const SCRIPT_10 = (
  JSON.parse(
    readFileSync(new URL('./fixtures/floodgate-1.0-scripts.json', import.meta.url), 'utf8'),
  ) as Record<string, string>
).tokenBucket!;

/** One decision of a 1.0 process: 1.0's script on the policy's key (ARGV unchanged since 1.0). */
async function decide10(prefix: string, id: string, p: Policy, now: number): Promise<boolean> {
  const key = policyKey(prefix, encodeIdentity(id), p.id);
  const call: StoreCall = { keys: [key], policies: [p], cost: 1, mode: 'limit' };
  const reply = (await redis.eval(SCRIPT_10, 1, key, ...encodeScriptArgs(call, now))) as unknown[];
  return reply[0] === 1;
}

const BURSTY = () => tokenBucket({ limit: 10, interval: '1s', burst: 25 });
const T0 = Date.UTC(2026, 11, 7);

describe("writeFormat: '1.0'", () => {
  it('without it, a 1.1 process stores the fill time, and 1.0 fails on that state', async () => {
    const p = BURSTY();
    const store = new IoRedisStore(redis, { clock: 'client', now: () => T0, batch: false });
    const limiter = createLimiter({ store, policy: p, prefix: 'wf-a', timeoutMs: false });
    for (let i = 0; i < 25; i++) expect((await limiter.limit('u')).allowed).toBe(true);
    expect((await limiter.limit('u')).allowed).toBe(false);
    const raw = await redis.get(policyKey('wf-a', encodeIdentity('u'), p.id));
    expect(raw).toMatch(/^\d+:\d+:\d+:2500$/);
    // Read by 1.0: a script error, so its limiter would decide by its per-process fallback.
    // This is what the option prevents.
    await expect(decide10('wf-a', 'u', p, T0)).rejects.toThrow(/user_script/);
  });

  it('with it, 1.1 writes only the forms 1.0 reads, and a mixed fleet decides as one 1.0 fleet', async () => {
    const p = BURSTY();
    let now = T0;
    const store = new IoRedisStore(redis, { clock: 'client', now: () => now, batch: false });
    const limiter = createLimiter({
      store,
      policy: p,
      prefix: 'wf-b',
      writeFormat: '1.0',
      timeoutMs: false,
    });
    const key = policyKey('wf-b', encodeIdentity('u'), p.id);
    // 1.0's rule: the arrival time alone, no fill time (the reference with its fill time at
    // its limit set to its own, as the option runs it).
    const as10 = { ...p, params: [25, 100, 1, 2500] as const };
    let state: PolicyState | undefined;
    const random = rng(7);
    let admitted = 0;
    for (let i = 0; i < 300; i++) {
      now += Math.floor(random() * 120);
      const expected = evaluatePolicy(as10, state, now, 1);
      if (expected.allowed) state = expected.next;
      const allowed =
        random() < 0.5 ? (await limiter.limit('u')).allowed : await decide10('wf-b', 'u', p, now);
      expect(allowed, `step ${i}`).toBe(expected.allowed);
      if (allowed) admitted++;
      const raw = await redis.get(key);
      if (raw !== null) expect(raw, `step ${i}`).toMatch(/^\d+(:\d+:\d+)?$/);
    }
    // The trace both spent the bucket and refilled it, so the comparison covered denials too.
    expect(admitted).toBeGreaterThan(25);
    expect(admitted).toBeLessThan(300);
  });

  it('is refused with INVALID_OPTION unless it is 1.0 or false', () => {
    const store = new IoRedisStore(redis, { clock: 'client', now: () => T0, batch: false });
    expect(() =>
      createLimiter({ store, policy: BURSTY(), writeFormat: '1.1' as unknown as '1.0' }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    expect(() => createLimiter({ store, policy: BURSTY(), writeFormat: false })).not.toThrow();
  });
});
