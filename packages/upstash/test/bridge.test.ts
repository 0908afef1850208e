// The testkit's HTTP-to-Redis bridge, through the real @upstash/redis client, with base64
// responses (the client's default) and without: what the store relies on, and what the client
// itself expects of the REST API. bridge-http.test.ts checks the wire (statuses, JSON, headers).
import { createHash } from 'node:crypto';
import {
  commandCalls,
  delta,
  type RedisHttpBridge,
  redisCommand,
  startRedisHttpBridge,
  useRedisServer,
} from '@floodgate/testkit/redis';
import { Redis } from '@upstash/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useRedisServer({ beforeAll, afterAll });
let bridge: RedisHttpBridge;
beforeAll(async () => {
  bridge = await startRedisHttpBridge({ port: server().port });
});
afterAll(() => bridge.close());

const sha1 = (text: string) => createHash('sha1').update(text).digest('hex');

for (const responseEncoding of ['base64', false] as const) {
  describe(`@upstash/redis through the bridge (responseEncoding: ${responseEncoding})`, () => {
    const k = (name: string) => `${name}:${responseEncoding}`;
    let redis: Redis;
    beforeAll(() => {
      redis = new Redis({
        url: bridge.url,
        token: bridge.token,
        responseEncoding,
        automaticDeserialization: false, // replies as Redis sent them
        enableAutoPipelining: false,
        enableTelemetry: false,
        retry: { retries: 0 },
      });
    });

    it('strings, statuses, integers, nil and nested arrays come back as Redis sent them', async () => {
      const values = ['plain', 'héllo ✓ 🚦', 'line\r\nbreak "quoted" \\ {tag}', ''];
      for (const [i, v] of values.entries()) {
        const key = k(`s{${i}}:\n🚦`); // any bytes in a key name
        expect(await redis.set(key, v)).toBe('OK');
        expect(await redis.get(key)).toBe(v);
      }
      expect(await redis.get(k('missing'))).toBeNull();
      expect(await redis.incr(k('n'))).toBe(1);
      expect(await redis.ping()).toBe('PONG');
      expect(await redis.eval("return {1, 'two', {3, {'four'}}, false, {}}", [], [])).toEqual([
        1,
        'two',
        [3, ['four']],
        null,
        [],
      ]);
      const [seconds, micros] = (await redis.time()) as unknown as [string, string];
      expect(Math.abs(Number(seconds) * 1000 - Date.now())).toBeLessThan(60_000);
      expect(Number(micros)).toBeLessThan(1_000_000);
    });

    it("an error reply rejects with Redis's message first", async () => {
      await redis.set(k('str'), 'x');
      await expect(redis.hget(k('str'), 'f')).rejects.toThrow(/^WRONGTYPE Operation against/);
      await expect(redis.exec(['NOSUCHCOMMAND'])).rejects.toThrow(/^ERR unknown command/);
    });

    it('EVALSHA of a script Redis does not hold: NOSCRIPT; EVAL caches it; SCRIPT FLUSH forgets it', async () => {
      const script = `return {ARGV[1], '${responseEncoding}'}`;
      await expect(redis.evalsha(sha1(script), [], ['a'])).rejects.toThrow(/^NOSCRIPT/);
      expect(await redis.eval(script, [], ['a'])).toEqual(['a', String(responseEncoding)]);
      expect(await redis.evalsha(sha1(script), [], ['b'])).toEqual(['b', String(responseEncoding)]);
      await redisCommand(server().port, ['SCRIPT', 'FLUSH']);
      await expect(redis.evalsha(sha1(script), [], ['c'])).rejects.toThrow(/^NOSCRIPT/);
    });

    it('a pipeline with a failing command in the middle runs every command, in order', async () => {
      const key = k('pipe');
      const items = await redis
        .pipeline()
        .set(key, '1')
        .hget(key, 'f')
        .incr(key)
        .get(key)
        .exec({ keepErrors: true });
      expect(items.map((i) => i.result ?? i.error)).toEqual([
        'OK',
        expect.stringMatching(/^WRONGTYPE/),
        2,
        '2',
      ]);
      await expect(redis.pipeline().get(key).hget(key, 'f').exec()).rejects.toThrow(
        /Command 2 \[ hget \] failed: WRONGTYPE/,
      );
      const list = k('list');
      const p = redis.pipeline();
      for (let i = 0; i < 200; i++) p.rpush(list, String(i));
      await p.exec();
      expect(await redis.lrange(list, 0, -1)).toEqual(
        Array.from({ length: 200 }, (_, i) => `${i}`),
      );
    });

    it('a transaction is one MULTI … EXEC: a runtime error is its own item, the rest is applied', async () => {
      const key = k('tx');
      const before = await commandCalls(server().port);
      const items = await redis
        .multi()
        .set(key, 'a')
        .hget(key, 'f')
        .append(key, 'b')
        .exec({ keepErrors: true });
      expect(items.map((i) => i.result ?? i.error)).toEqual([
        'OK',
        expect.stringMatching(/^WRONGTYPE/),
        2,
      ]);
      expect(await redis.get(key)).toBe('ab');
      const d = delta(before, await commandCalls(server().port));
      expect([d.multi, d.exec]).toEqual([1, 1]);
    });

    it("the Upstash-only shebang flag of @upstash/ratelimit's scripts: EVAL, EVALSHA and NOSCRIPT as on Upstash", async () => {
      const script = `#!lua flags=allow-key-locking\nreturn ARGV[1] .. '${responseEncoding}'`;
      // redis-server itself refuses the flag: the bridge must drop it.
      await expect(redisCommand(server().port, ['EVAL', script, 0, 'x'])).rejects.toThrow(
        /Unexpected flag in script shebang: allow-key-locking/,
      );
      await expect(redis.evalsha(sha1(script), [], ['x'])).rejects.toThrow(/^NOSCRIPT/);
      expect(await redis.eval(script, [], ['x'])).toBe(`x${responseEncoding}`);
      expect(await redis.evalsha(sha1(script), [], ['y'])).toBe(`y${responseEncoding}`);
      expect(await redis.scriptExists(sha1(script))).toEqual([1]);
      await redisCommand(server().port, ['SCRIPT', 'FLUSH']);
      await expect(redis.evalsha(sha1(script), [], ['z'])).rejects.toThrow(/^NOSCRIPT/);
      expect(await redis.scriptLoad(script)).toBe(sha1(script));
      expect(await redis.evalsha(sha1(script), [], ['z'])).toBe(`z${responseEncoding}`);
    });

    it('bytes that are not UTF-8 arrive as U+FFFD, whichever the encoding', async () => {
      const key = k('bin');
      await redis.eval('return redis.call("SET", KEYS[1], string.char(255, 0, 65))', [key], []);
      expect(await redis.get(key)).toBe('\ufffd\u0000A');
    });

    it('a wrong token is refused with WRONGPASS', async () => {
      const stranger = new Redis({
        url: bridge.url,
        token: 'wrong',
        enableTelemetry: false,
        retry: { retries: 0 },
      });
      const before = bridge.requests.unauthorized;
      await expect(stranger.get(k('any'))).rejects.toThrow(/WRONGPASS/);
      expect(bridge.requests.unauthorized).toBe(before + 1);
    });
  });
}
