// A write at an absolute expiry (a window's first write on the server clock, a refund) is one
// SET … PXAT where Redis says its version (7.0 and later), else SET, then PEXPIREAT (core's
// assemble.ts setAt, batch.lua kset_at). Both paths, on a real Redis: the same value, expiring
// at the same absolute ms, the end of the state's window. The older path runs here by the same
// script with the version check answered as a Redis before 7.0 answers it.
import { fixedWindow, type Policy, quota, slidingWindow } from '@floodgate/core';
import { batchScriptFor, encodeScriptArgs, scriptFor } from '@floodgate/core/redis';
import type { StoreCall } from '@floodgate/core/store';
import { useRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useRedisServer({ beforeAll, afterAll });
let redis: Redis;
beforeAll(() => {
  redis = new Redis(server().url);
});
afterAll(() => {
  redis?.disconnect();
});

const POLICIES: readonly Policy[] = [
  fixedWindow({ limit: 5, window: '1h' }),
  slidingWindow({ limit: 5, window: '1h' }),
  quota({ limit: 5, per: 'day' }),
];
const OLDER = (source: string) => {
  const older = source
    .replaceAll('if redis.REDIS_VERSION_NUM then', 'if false then')
    .replace('local pxat = redis.REDIS_VERSION_NUM ~= nil', 'local pxat = false');
  expect(older).not.toBe(source);
  return older;
};

/** The key's value and absolute expiry (ms), and the reply. */
async function run(source: string, keys: string[], args: string[]) {
  const reply = (await redis.eval(source, keys.length, ...keys, ...args)) as unknown[];
  const state = await Promise.all(
    keys.map(async (k) => [await redis.get(k), Number(await redis.call('PEXPIRETIME', k))]),
  );
  return { reply: reply.map(Number), state };
}

describe('a write at an absolute expiry: SET … PXAT, or SET then PEXPIREAT before Redis 7.0', () => {
  for (const p of POLICIES) {
    it(`${p.kind}: the one-call script's first write and refund, both ways`, async () => {
      const { source } = scriptFor([p]);
      expect(source).toContain("'PXAT'");
      const call = (mode: StoreCall['mode']): string[] =>
        encodeScriptArgs({ keys: ['k'], policies: [p], cost: 2, mode });
      for (const [variant, text] of [
        ['PXAT', source],
        ['PEXPIREAT', OLDER(source)],
      ] as const) {
        const key = `set-at:${p.kind}:${variant}`;
        const first = await run(text, [key], call('limit'));
        // Admitted, 3 left; the key expires at the state's end: TIME + its reset.
        expect(first.reply.slice(0, 2)).toEqual([1, 3]);
        const [time, reset] = [first.reply[5]!, first.reply[2]!];
        expect(first.state[0]![1]).toBe(time + reset);
        const refunded = await run(text, [key], call('refund'));
        expect(refunded.state[0]![1]).toBe(refunded.reply[5]! + refunded.reply[2]!);
        // The refund took the 2 back: the next call of 5 is admitted.
        const all = encodeScriptArgs({ keys: [key], policies: [p], cost: 5, mode: 'limit' });
        expect((await run(text, [key], all)).reply[0]).toBe(1);
      }
    });

    it(`${p.kind}: the batch script's first writes, both ways`, async () => {
      const { source } = batchScriptFor([p]);
      const block = encodeScriptArgs({ keys: ['k'], policies: [p], cost: 1, mode: 'limit' });
      for (const [variant, text] of [
        ['PXAT', source],
        ['PEXPIREAT', OLDER(source)],
      ] as const) {
        const keys = [`set-at:b:${p.kind}:${variant}:1`, `set-at:b:${p.kind}:${variant}:2`];
        // No repeats (''), both calls on block 1, then the block.
        const { reply, state } = await run(text, keys, ['', '1', '1', ...block]);
        const time = reply[reply.length - 1]!;
        for (const [i, [value, expiry]] of state.entries()) {
          expect(reply.slice(i * 5, i * 5 + 2)).toEqual([1, 4]);
          expect(value).not.toBeNull();
          expect(expiry).toBe(time + reply[i * 5 + 2]!);
        }
      }
    });
  }
});
