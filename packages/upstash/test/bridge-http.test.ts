// The bridge on the wire, with fetch: the statuses, JSON and headers of Upstash's REST API that
// @upstash/redis reads (docs: upstash.com/docs/redis/features/restapi).
import {
  type RedisHttpBridge,
  redisCommand,
  startRedisHttpBridge,
  useRedisServer,
} from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const server = useRedisServer({ beforeAll, afterAll });
let bridge: RedisHttpBridge;
beforeAll(async () => {
  bridge = await startRedisHttpBridge({ port: server().port, token: 'secret' });
});
afterAll(() => bridge.close());

interface Sent {
  status: number;
  body: string;
  syncToken: string | null;
}

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = { authorization: 'Bearer secret' },
  method = 'POST',
): Promise<Sent> {
  const res = await fetch(`${bridge.url}${path}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(method === 'POST' ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
  });
  return {
    status: res.status,
    body: await res.text(),
    syncToken: res.headers.get('upstash-sync-token'),
  };
}
const base64 = { authorization: 'Bearer secret', 'upstash-encoding': 'base64' };

describe('the bridge on the wire', () => {
  it('one command: 200 and { result }; an error reply: 400 and { error }', async () => {
    expect(await post('/', ['SET', 'w:k', 'bar'])).toMatchObject({
      status: 200,
      body: '{"result":"OK"}',
    });
    expect(await post('/', ['GET', 'w:k'])).toMatchObject({
      status: 200,
      body: '{"result":"bar"}',
    });
    expect(await post('/', ['GET', 'w:none'])).toMatchObject({ body: '{"result":null}' });
    const wrong = await post('/', ['HGET', 'w:k', 'f']);
    expect(wrong.status).toBe(400);
    expect(JSON.parse(wrong.body)).toEqual({ error: expect.stringMatching(/^WRONGTYPE /) });
    const noscript = await post('/', ['EVALSHA', 'ab'.repeat(20), 0]);
    expect([noscript.status, JSON.parse(noscript.body).error]).toEqual([
      400,
      'NOSCRIPT No matching script. Please use EVAL.',
    ]);
  });

  it('base64 on request: every string base64 except the status OK; numbers, nil, errors as they are', async () => {
    await redisCommand(server().port, ['DEL', 'w:l']);
    await redisCommand(server().port, ['RPUSH', 'w:l', 'a', 'bc']);
    expect((await post('/', ['SET', 'w:k', 'bar'], base64)).body).toBe('{"result":"OK"}');
    expect((await post('/', ['GET', 'w:k'], base64)).body).toBe('{"result":"YmFy"}');
    expect((await post('/', ['PING'], base64)).body).toBe('{"result":"UE9ORw=="}');
    expect((await post('/', ['LLEN', 'w:l'], base64)).body).toBe('{"result":2}');
    expect((await post('/', ['LRANGE', 'w:l', 0, -1], base64)).body).toBe(
      '{"result":["YQ==","YmM="]}',
    );
    expect((await post('/', ['GET', 'w:none'], base64)).body).toBe('{"result":null}');
    const nested = await post('/', ['EVAL', "return {1, {'x', false}}", 0], base64);
    expect(nested.body).toBe('{"result":[1,["eA==",null]]}');
    expect(JSON.parse((await post('/', ['HGET', 'w:k', 'f'], base64)).body).error).toMatch(
      /^WRONGTYPE/,
    );
  });

  it('bytes that are not UTF-8: exact in base64, U+FFFD in JSON', async () => {
    await post('/', [
      'EVAL',
      'return redis.call("SET", KEYS[1], string.char(255, 0, 65))',
      1,
      'w:bin',
    ]);
    expect((await post('/', ['GET', 'w:bin'], base64)).body).toBe('{"result":"/wBB"}');
    expect(JSON.parse((await post('/', ['GET', 'w:bin'])).body)).toEqual({
      result: '\ufffd\u0000A',
    });
  });

  it('integers past 2^53 go out digit for digit', async () => {
    await post('/', ['SET', 'w:big', '9007199254740992']);
    expect((await post('/', ['INCR', 'w:big'])).body).toBe('{"result":9007199254740993}');
  });

  it('a pipeline: 200, one item per command in order, a failure its own item', async () => {
    const sent = await post('/pipeline', [
      ['SET', 'w:p', '1'],
      ['HGET', 'w:p', 'f'],
      ['INCR', 'w:p'],
      ['SELECT', '1'],
    ]);
    expect(sent.status).toBe(200);
    expect(JSON.parse(sent.body)).toEqual([
      { result: 'OK' },
      { error: expect.stringMatching(/^WRONGTYPE/) },
      { result: 2 },
      { error: expect.stringMatching(/not available/) },
    ]);
  });

  it('a transaction that cannot be queued is discarded whole: 400 and one { error }, nothing applied', async () => {
    const sent = await post('/multi-exec', [['SET', 'w:t', 'x'], ['NOSUCHCOMMAND']]);
    expect(sent.status).toBe(400);
    expect(JSON.parse(sent.body)).toEqual({ error: expect.stringMatching(/^ERR unknown command/) });
    expect(await redisCommand(server().port, ['EXISTS', 'w:t'])).toBe(0);
    const ok = await post('/multi-exec', [
      ['SET', 'w:t', 'x'],
      ['GET', 'w:t'],
    ]);
    expect([ok.status, JSON.parse(ok.body)]).toEqual([200, [{ result: 'OK' }, { result: 'x' }]]);
  });

  it('authentication: a bearer token or ?_token=, else 401 and WRONGPASS', async () => {
    const none = await post('/', ['PING'], {});
    expect([none.status, JSON.parse(none.body).error]).toEqual([
      401,
      'WRONGPASS invalid or missing auth token',
    ]);
    expect((await post('/', ['PING'], { authorization: 'Bearer nope' })).status).toBe(401);
    expect((await post('/?_token=secret', ['PING'], {})).body).toBe('{"result":"PONG"}');
  });

  it('every answer carries an Upstash-Sync-Token, a new one each time', async () => {
    const a = await post('/', ['PING']);
    const b = await post('/', ['PING']);
    expect(a.syncToken).toMatch(/^\d+$/);
    expect(Number(b.syncToken)).toBeGreaterThan(Number(a.syncToken));
  });

  it('what the bridge does not serve says so: other methods, paths, bodies and commands', async () => {
    expect((await post('/', undefined, { authorization: 'Bearer secret' }, 'GET')).status).toBe(
      405,
    );
    expect((await post('/set/w:k/v', ['x'])).status).toBe(400);
    expect((await post('/', '{not json')).status).toBe(400);
    expect((await post('/', [])).status).toBe(400);
    expect((await post('/', ['GET', { key: 1 }])).status).toBe(400);
    for (const command of [['SELECT', '1'], ['WATCH', 'w:k'], ['MULTI'], ['SUBSCRIBE', 'c']]) {
      const sent = await post('/', command);
      expect([sent.status, JSON.parse(sent.body).error]).toEqual([
        400,
        expect.stringMatching(/not available/),
      ]);
    }
  });
});
