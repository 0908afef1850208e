import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FaultProxy,
  type RedisServer,
  redisCommand,
  redisCommands,
  startFaultProxy,
  startRedisServer,
} from '../src/redis/index.js';

let server: RedisServer;
let proxy: FaultProxy;
beforeAll(async () => {
  server = await startRedisServer();
  proxy = await startFaultProxy({ target: server });
});
afterAll(async () => {
  await proxy.close();
  await server.stop();
});

describe('startFaultProxy', () => {
  it('forwards both ways and counts connections', async () => {
    const before = proxy.connections;
    expect(await redisCommand(proxy.port, ['PING'])).toBe('PONG');
    expect(proxy.connections).toBe(before + 1);
  });

  it('adds latency each way, and keeps the byte order when the latency changes mid-stream', async () => {
    proxy.set('none', { latencyMs: 150 });
    const started = performance.now();
    const replies = redisCommands(
      proxy.port,
      Array.from({ length: 50 }, (_, i) => ['ECHO', `m${i}`]),
    );
    // Once the requests are in the proxy's queue, later chunks would be due first: they must wait.
    const received = proxy.received;
    while (proxy.received === received) await new Promise((r) => setTimeout(r, 1));
    proxy.set('none', { latencyMs: 0 });
    expect(await replies).toEqual(Array.from({ length: 50 }, (_, i) => `m${i}`));
    expect(performance.now() - started).toBeGreaterThanOrEqual(140); // the request still waited
  });

  it('stalls: nothing arrives until it heals, then everything does, in order', async () => {
    proxy.set('stall');
    let answered = false;
    const reply = redisCommand(proxy.port, ['INCR', 'stalled']).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((r) => setTimeout(r, 200));
    expect(answered).toBe(false);
    expect(await redisCommand(server.port, ['GET', 'stalled'])).toBeNull(); // not even sent
    proxy.set('none');
    expect(await reply).toBe(1);
  });

  it('drops: the reply is cut mid-way and the connection reset', async () => {
    proxy.set('drop');
    await expect(redisCommand(proxy.port, ['ECHO', 'x'.repeat(1000)])).rejects.toThrow();
    proxy.set('none');
    expect(await redisCommand(proxy.port, ['PING'])).toBe('PONG');
  });

  it('refuses: each new connection is reset at once, and counted', async () => {
    proxy.set('refuse');
    const before = proxy.connections;
    await expect(redisCommand(proxy.port, ['PING'])).rejects.toThrow();
    await expect(redisCommand(proxy.port, ['PING'])).rejects.toThrow();
    expect(proxy.connections).toBe(before + 2);
    proxy.set('none');
    expect(await redisCommand(proxy.port, ['PING'])).toBe('PONG');
  });
});
