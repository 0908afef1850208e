import { createLimiter, fixedWindow, slidingWindowLog, tokenBucket } from '@floodgate/core';
import { scriptForKinds } from '@floodgate/core/redis';
import {
  commandCalls,
  delta,
  expectScriptFlushSurvived,
  keysFor,
  openClient,
  redisCommand,
  useRedisServer,
} from '@floodgate/testkit/redis';
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstashStore } from '../src/index.js';
import { type BridgedClient, UPSTASH, UPSTASH_JSON } from './adapters.js';

const server = useRedisServer({ beforeAll, afterAll });

for (const adapter of [UPSTASH, UPSTASH_JSON]) {
  describe(adapter.name, () => {
    const tag = adapter.name.replace(/\W+/g, '');
    let client: BridgedClient;
    beforeAll(async () => {
      client = await openClient(adapter, server().url);
    });
    afterAll(() => adapter.disconnect(client));
    const store = (options?: Parameters<typeof adapter.makeStore>[1]) =>
      adapter.makeStore(client, options);

    it('one EVALSHA, one HTTP request per decision; a reset is one EVAL', async () => {
      const limiter = createLimiter({
        store: store(),
        policy: [
          fixedWindow({ limit: 3, window: '1h' }),
          tokenBucket({ limit: 5, interval: '1h' }),
        ],
        prefix: `one-${tag}`,
        onStoreError: 'throw',
        timeoutMs: 10_000, // semantics, not timeouts: generous on a loaded machine
        blockCache: false,
      });
      await limiter.limit('warm'); // the store's first TIME, and the script cached
      const before = await commandCalls(server().port);
      const requests = client.bridge!.requests.command;
      const ds = [await limiter.limit('k'), await limiter.limit('k'), await limiter.peek('k')];
      expect(ds.map((d) => [d.allowed, d.remaining])).toEqual([
        [true, 2],
        [true, 1],
        [true, 1],
      ]);
      await limiter.reset('k');
      expect((await limiter.limit('k')).remaining).toBe(2);
      // The reset script's own DEL counts too.
      expect(delta(before, await commandCalls(server().port))).toEqual({
        evalsha: 4,
        eval: 1,
        del: 1,
      });
      expect(client.bridge!.requests.command - requests).toBe(5);
    });

    it('reloads the script after SCRIPT FLUSH: NOSCRIPT over HTTP, then EVAL with the same arguments', async () => {
      const limiter = createLimiter({
        store: store(),
        policy: fixedWindow({ limit: 3, window: '1h' }),
        prefix: `nos-${tag}`,
        onStoreError: 'throw',
        timeoutMs: 10_000,
        blockCache: false,
      });
      await limiter.limit('a');
      const port = server().port;
      await redisCommand(port, ['SCRIPT', 'FLUSH']);
      const sha = scriptForKinds(['fixedWindow']).sha1;
      expect(await redisCommand(port, ['SCRIPT', 'EXISTS', sha])).toEqual([0]);
      const before = await commandCalls(port);
      expect((await limiter.limit('a')).remaining).toBe(1);
      expect((await limiter.limit('a')).remaining).toBe(0);
      expect(delta(before, await commandCalls(port))).toEqual({ evalsha: 2, eval: 1 });
    });

    for (const batch of [false, true]) {
      it(`SCRIPT FLUSH in the middle of a stream of decisions fails none of them (batch: ${batch})`, async () => {
        // Over HTTP a batch's calls may split across requests: fewer than 100 EVALSHA, not 30.
        await expectScriptFlushSurvived(
          expect,
          store({ batch }),
          server().port,
          `flush-${tag}-${batch}`,
          batch,
          [1, 99],
        );
      });
    }

    for (const batch of [true, false]) {
      it(`many identities in flight at once: exact admissions for each (batch: ${batch})`, async () => {
        const limiter = createLimiter({
          store: store({ batch }),
          policy: [
            slidingWindowLog({ limit: 7, window: '1h' }),
            fixedWindow({ limit: 9, window: '1h' }),
          ],
          prefix: `many-${tag}-${batch}`,
          onStoreError: 'throw',
          timeoutMs: 20_000,
          blockCache: false,
        });
        // The plain script, then the batch script, cached first: every request below is one EVALSHA.
        await limiter.limit('warm');
        await Promise.all([0, 1, 2].map(() => limiter.limit('warm')));
        const ids = Array.from({ length: 40 }, (_, i) => `user-${i}`);
        const before = await commandCalls(server().port);
        const requests = client.bridge!.requests.command;
        // 40 identities × 15 calls, all made in one tick, interleaved.
        const calls = Array.from({ length: 15 }, () => ids.map((id) => limiter.limit(id))).flat();
        const ds = await Promise.all(calls);
        for (let i = 0; i < ids.length; i++) {
          const mine = ds.filter((_, j) => j % ids.length === i);
          const admitted = mine.filter((d) => d.allowed).map((d) => d.remaining);
          expect(admitted.sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6]);
          expect(mine.every((d) => d.reason === undefined)).toBe(true);
        }
        const evalsha = delta(before, await commandCalls(server().port)).evalsha!;
        const sent = client.bridge!.requests.command - requests;
        // Batched: runs of at most 64 calls, one HTTP request each; alone: one per call.
        if (batch) {
          expect(evalsha).toBeLessThanOrEqual(Math.ceil(600 / 64) + 1);
          expect(sent).toBe(evalsha);
        } else {
          expect([evalsha, sent]).toEqual([600, 600]);
        }
      });
    }

    it("an error reply reaches the caller as Redis's message, without the client's echo of the command", async () => {
      const policy = fixedWindow({ limit: 3, window: '1h' });
      const keys = keysFor(`wrongtype-${tag}`, 'x', [policy]);
      await redisCommand(server().port, ['HSET', keys[0]!, 'f', '1']);
      const error = await store()
        .evaluate({ keys, policies: [policy], cost: 1, mode: 'limit' })
        .then(
          () => undefined,
          (e: Error & { code?: string; cause?: Error }) => e,
        );
      expect(error?.code).toBe('STORE_UNAVAILABLE');
      expect(error?.message).toMatch(/^Redis \(upstash\) failed: WRONGTYPE /);
      expect(error?.message).not.toMatch(/command was/);
      // The client's own error stays reachable, as the cause of the cause.
      expect(error?.cause?.cause).toBeInstanceOf(Error);
      expect(String((error?.cause?.cause as Error | undefined)?.message)).toMatch(/command was/);
    });
  });
}

describe('UpstashStore options', () => {
  let client: BridgedClient;
  beforeAll(async () => {
    client = await openClient(UPSTASH, server().url);
  });
  afterAll(() => UPSTASH.disconnect(client));

  it('is remote, names itself upstash, and checks its options as every Redis store does', () => {
    const store = new UpstashStore(client.redis!);
    expect([store.kind, store.remote]).toEqual(['upstash', true]);
    expect(() => new UpstashStore(client.redis!, { clock: 'local' as 'server' })).toThrow(/clock/);
    expect(() => new UpstashStore(client.redis!, { batch: { maxCalls: 0 } })).toThrow(/batch/);
  });

  it('refuses strict mode: WAIT cannot ride on the connection a REST request used', () => {
    expect(
      () => new UpstashStore(client.redis!, { replicas: { count: 1, timeoutMs: 50 } }),
    ).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTION',
        message: expect.stringMatching(/replicas/),
      }),
    );
  });

  it('refuses what is not an @upstash/redis client', () => {
    for (const bad of [undefined, null, {}, { client: {} }, { call: () => 1 }]) {
      expect(() => new UpstashStore(bad as never)).toThrow(
        expect.objectContaining({ code: 'INVALID_OPTION' }),
      );
    }
  });

  it("goes through the client's own requester: middleware added to it sees the store's commands", async () => {
    const redis = new Redis({
      url: client.bridge!.url,
      token: client.bridge!.token,
      enableTelemetry: false,
      retry: { retries: 0 },
    });
    const store = new UpstashStore(redis, { changes: false });
    const seen: unknown[] = [];
    redis.use((req, next) => {
      seen.push((req.body as string[])[0]);
      return next(req);
    });
    const policy = fixedWindow({ limit: 1, window: '1h' });
    const keys = keysFor('middleware', 'x', [policy]);
    await store.evaluate({ keys, policies: [policy], cost: 1, mode: 'limit' });
    await store.reset(keys);
    expect(seen.filter((name) => name !== 'EVAL')).toEqual(['EVALSHA', 'DEL']);
  });

  it('rejectIfNotReady never fails a call: HTTP has no connection to be down', async () => {
    const store = new UpstashStore(client.redis!, { rejectIfNotReady: true });
    const policy = fixedWindow({ limit: 1, window: '1h' });
    const keys = keysFor('ready', 'x', [policy]);
    const [r] = await store.evaluate({ keys, policies: [policy], cost: 1, mode: 'limit' });
    expect(r!.allowed).toBe(true);
  });
});
