import { type AddressInfo, createServer } from 'node:net';
import {
  createLimiter,
  type Decision,
  type FloodgateError,
  fixedWindow,
  tokenBucket,
} from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import {
  keysFor,
  openClient,
  type RedisServer,
  redisCommand,
  startRedisHttpBridge,
  startRedisServer,
} from '@floodgate/testkit/redis';
import { Redis } from '@upstash/redis';
import { describe, expect, it } from 'vitest';
import { UpstashStore } from '../src/index.js';
import { UPSTASH } from './adapters.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const policy = fixedWindow({ limit: 3, window: '1h' });
const call = (prefix: string) => ({
  keys: keysFor(prefix, 'x', [policy]),
  policies: [policy],
  cost: 1,
  mode: 'limit' as const,
});

/** A limiter on `store` that reports every failure it absorbed into `errors`. */
function limiterOn(store: UpstashStore, onStoreError: 'allow' | 'deny', errors: FloodgateError[]) {
  return createLimiter({
    store,
    policy,
    prefix: 'out',
    onStoreError,
    onError: (e) => errors.push(e),
  });
}

/** Runs `fn` on a throw-away redis-server, stopped after it. */
async function withServer(fn: (own: RedisServer) => Promise<void>): Promise<void> {
  const own = await startRedisServer();
  try {
    await fn(own);
  } finally {
    await own.stop();
  }
}

describe('UpstashStore when the REST endpoint or the Redis behind it fails', () => {
  it('the endpoint is down (connection refused): STORE_UNAVAILABLE at once, the limiter decides by onStoreError', async () => {
    await withServer(async (own) => {
      const client = await openClient(UPSTASH, own.url);
      await UPSTASH.disconnect(client); // the bridge is gone: its port refuses connections
      const store = new UpstashStore(client.redis!);
      await expect(store.evaluate(call('refused'))).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
        message: expect.stringMatching(/^Redis \(upstash\) failed: /),
      });
      await expect(store.reset(call('refused').keys)).rejects.toMatchObject({
        code: 'STORE_UNAVAILABLE',
      });
      const errors: FloodgateError[] = [];
      const allow = await limiterOn(store, 'allow', errors).limit('x');
      const deny = await limiterOn(store, 'deny', errors).limit('x');
      expect([allow.allowed, allow.reason, deny.allowed, deny.reason]).toEqual([
        true,
        'store-unavailable',
        false,
        'store-unavailable',
      ]);
      expect(errors.map((e) => e.code)).toEqual(['STORE_UNAVAILABLE', 'STORE_UNAVAILABLE']);
    });
  });

  it('with default options, the endpoint down: the in-process fallback decides, up to the limit, per process', async () => {
    await withServer(async (own) => {
      const client = await openClient(UPSTASH, own.url);
      await UPSTASH.disconnect(client); // the bridge is gone: its port refuses connections
      const store = new UpstashStore(client.redis!);
      // A fresh MemoryStore each time: each limiter counts on its own.
      expect(store.fallback()).toBeInstanceOf(MemoryStore);
      expect(store.fallback()).not.toBe(store.fallback());
      // No onStoreError, timeoutMs or breaker given: the defaults are what is under test.
      const limiter = createLimiter({ store, policy, prefix: 'fb' });
      const ds: Decision[] = [];
      for (let i = 0; i < 5; i++) ds.push(await limiter.limit('x'));
      expect(ds.map((d) => [d.allowed, d.reason])).toEqual([
        [true, 'store-unavailable'],
        [true, 'store-unavailable'],
        [true, 'store-unavailable'],
        [false, 'store-unavailable'],
        [false, 'store-unavailable'],
      ]);
      expect(ds.map((d) => d.remaining)).toEqual([2, 1, 0, 0, 0]);
      // Counted in this process only: another limiter (another process, as far as its fallback
      // knows) starts from a full window, and nothing reached Redis.
      const other = createLimiter({ store: new UpstashStore(client.redis!), policy, prefix: 'fb' });
      expect((await other.limit('x')).remaining).toBe(2);
      expect(await redisCommand(own.port, ['DBSIZE'])).toBe(0);
    });
  });

  it("the fallback runs on the store's clock: with clock: 'client', the caller's now()", async () => {
    await withServer(async (own) => {
      const client = await openClient(UPSTASH, own.url);
      await UPSTASH.disconnect(client);
      let now = Date.parse('2030-01-01T00:00:00Z');
      const store = new UpstashStore(client.redis!, { clock: 'client', now: () => now });
      const limiter = createLimiter({ store, policy, prefix: 'fbclock' });
      const first = [];
      for (let i = 0; i < 4; i++) first.push((await limiter.limit('x')).allowed);
      expect(first).toEqual([true, true, true, false]);
      // An hour on the store's clock, none in real time: the fallback's window is a new one.
      now += 3_600_000;
      const later = await limiter.limit('x');
      expect([later.allowed, later.remaining, later.reason]).toEqual([
        true,
        2,
        'store-unavailable',
      ]);
    });
  });

  it('Redis is down behind the endpoint: the REST API answers 500, the store STORE_UNAVAILABLE', async () => {
    await withServer(async (own) => {
      const client = await openClient(UPSTASH, own.url);
      try {
        await own.stop();
        await expect(new UpstashStore(client.redis!).evaluate(call('down'))).rejects.toMatchObject({
          code: 'STORE_UNAVAILABLE',
          message: expect.stringMatching(/could not reach redis-server/),
        });
      } finally {
        await UPSTASH.disconnect(client);
      }
    });
  });

  it('a Redis restart behind the endpoint is survived: the data is gone, the script is loaded again', async () => {
    await withServer(async (own) => {
      const client = await openClient(UPSTASH, own.url);
      try {
        const limiter = createLimiter({
          store: new UpstashStore(client.redis!),
          policy: tokenBucket({ limit: 5, interval: '1h' }),
          onStoreError: 'throw',
          timeoutMs: 10_000,
          blockCache: false,
        });
        expect((await limiter.limit('k')).remaining).toBe(4);
        await own.restart();
        let d: Decision | undefined;
        for (const until = Date.now() + 20_000; d === undefined && Date.now() < until; ) {
          d = await limiter.limit('k').catch(() => sleep(50).then(() => undefined));
        }
        expect(d?.remaining).toBe(4); // no persistence: the bucket starts over
        expect((await limiter.limit('k')).remaining).toBe(3);
      } finally {
        await UPSTASH.disconnect(client);
      }
    });
  });

  it('the endpoint back at the same URL: decisions go to Redis again, on the counts Redis kept', async () => {
    await withServer(async (own) => {
      const client = await openClient(UPSTASH, own.url);
      const { port, token } = client.bridge!;
      const store = new UpstashStore(client.redis!);
      const evaluate = async () => (await store.evaluate(call('back')))[0]!;
      expect((await evaluate()).remaining).toBe(2);
      await client.bridge!.close();
      await expect(evaluate()).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE' });
      const again = await startRedisHttpBridge({ port: own.port, token, httpPort: port });
      try {
        expect((await evaluate()).remaining).toBe(1);
      } finally {
        await again.close();
      }
    });
  });

  it('a request that reaches Redis after the limiter gave up charges nothing (Redis paused behind the endpoint)', async () => {
    await withServer(async (own) => {
      const client = await openClient(UPSTASH, own.url);
      const pid = own.pid;
      let paused = false;
      try {
        const limiter = createLimiter({
          store: new UpstashStore(client.redis!),
          policy,
          onStoreError: 'allow',
          timeoutMs: 300,
          breaker: false,
          blockCache: false,
        });
        expect((await limiter.limit('k')).remaining).toBe(2);
        process.kill(pid, 'SIGSTOP');
        paused = true;
        const late = await limiter.limit('k');
        expect([late.allowed, late.reason]).toEqual([true, 'store-timeout']);
        process.kill(pid, 'SIGCONT');
        paused = false;
        await sleep(300); // the held request runs now: its script finds the deadline passed
        const peek = createLimiter({
          store: new UpstashStore(client.redis!),
          policy,
          blockCache: false,
        });
        const after = await peek.peek('k');
        expect([after.reason, after.remaining]).toEqual([undefined, 2]);
      } finally {
        if (paused) process.kill(pid, 'SIGCONT');
        await UPSTASH.disconnect(client);
      }
    });
  });

  it('retry: { retries: 0 } makes one attempt; retry: false makes two (why the README asks for the former)', async () => {
    // A listener that resets every connection: each attempt of the client is one connection.
    let attempts = 0;
    const sink = createServer((socket) => {
      attempts++;
      socket.resetAndDestroy();
    });
    await new Promise<void>((resolve) => sink.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(sink.address() as AddressInfo).port}`;
    try {
      const counted = async (retry: false | { retries: number }) => {
        attempts = 0;
        const redis = new Redis({ url, token: 't', enableTelemetry: false, retry });
        await expect(new UpstashStore(redis).evaluate(call('attempts'))).rejects.toMatchObject({
          code: 'STORE_UNAVAILABLE',
        });
        return attempts;
      };
      expect([await counted({ retries: 0 }), await counted(false)]).toEqual([1, 2]);
    } finally {
      await new Promise((resolve) => sink.close(resolve));
    }
  });

  it("the client's own retries outlast the limiter's deadline: store-timeout (why the README says retries: 0)", async () => {
    await withServer(async (own) => {
      const bridge = await startRedisHttpBridge({ port: own.port });
      await bridge.close();
      const retrying = new Redis({
        url: bridge.url,
        token: bridge.token,
        enableTelemetry: false,
        retry: { retries: 2, backoff: () => 300 },
      });
      const errors: FloodgateError[] = [];
      const d = await limiterOn(new UpstashStore(retrying), 'allow', errors).limit('x');
      expect([d.allowed, d.reason, errors[0]?.code]).toEqual([
        true,
        'store-timeout',
        'STORE_TIMEOUT',
      ]);
      await sleep(1000); // the client gives up in the background: nothing left running after the test
    });
  });
});
