// SCRIPT FLUSH while decisions are in flight: the check every Redis-protocol store runs, through
// the faults suite (faults.ts) or, for a store that is not a TCP client (UpstashStore over HTTP),
// from its own test file.
import { createLimiter, type Decision, slidingWindowLog, tokenBucket } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import { commandCalls, delta } from '../redis-inspect.js';
import { redisCommand } from '../resp.js';
import type { RedisSuiteApi } from './types.js';

/**
 * 600 decisions on one identity, 20 at a time, with `SCRIPT FLUSH` sent to the server on `port`
 * three times while calls are in flight: none fails or falls back, exactly the limit (250) is
 * admitted, the scripts were loaded again (`EVAL` at least 3 times), and the `EVALSHA` count is
 * 600 unbatched or within `batchedEvalsha` batched.
 * @example
 * ```ts
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { expectScriptFlushSurvived, startRedisServer } from '@floodgate/testkit/redis';
 * import { Redis } from 'ioredis';
 * import { expect } from 'vitest';
 *
 * const server = await startRedisServer();
 * const store = new IoRedisStore(new Redis(server.url), { batch: true });
 * await expectScriptFlushSurvived(expect, store, server.port, 'flush', true, [30, 33]);
 * ```
 * @beta
 */
export async function expectScriptFlushSurvived(
  expect: RedisSuiteApi['expect'],
  store: Store,
  port: number,
  prefix: string,
  batch: boolean,
  batchedEvalsha: readonly [number, number],
): Promise<void> {
  const limiter = createLimiter({
    store,
    policy: [
      slidingWindowLog({ limit: 250, window: '1h' }),
      tokenBucket({ limit: 1000, interval: '1h' }),
    ],
    prefix,
    onStoreError: 'throw', // an error must surface, not hide behind the fallback
    timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
    blockCache: false,
  });
  const before = await commandCalls(port);
  const decisions: Decision[] = [];
  for (let round = 0; round < 30; round++) {
    const calls = Array.from({ length: 20 }, () => limiter.limit('stream'));
    // Flush while the calls are in flight, three times over the stream.
    if (round % 10 === 5) await redisCommand(port, ['SCRIPT', 'FLUSH']);
    decisions.push(...(await Promise.all(calls)));
  }
  expect(decisions).toHaveLength(600);
  expect(decisions.filter((d) => d.allowed)).toHaveLength(250);
  expect(decisions.every((d) => d.reason === undefined)).toBe(true);
  const d = delta(before, await commandCalls(port));
  expect(d.eval).toBeGreaterThanOrEqual(3); // the reload path really ran
  if (batch) {
    expect(d.evalsha).toBeGreaterThanOrEqual(batchedEvalsha[0]);
    expect(d.evalsha).toBeLessThanOrEqual(batchedEvalsha[1]);
  } else {
    expect(d.evalsha).toBe(600);
  }
}
