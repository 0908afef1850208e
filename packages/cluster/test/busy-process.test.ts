// A shard that answered in time while this process was busy (CPU-starved, a long GC): its reply
// waits in the socket when the call's timer comes due. The deadline must be decided after pending
// I/O, as the limiter's own timer decides it (core timeout.ts): else the shard's guard counted a
// timeout against a shard that answered and charged, and after a few such moments on a loaded
// machine it opened the shard's breaker.
import { execFileSync } from 'node:child_process';
import { createLimiter, fixedWindow } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { keysFor, type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ShardedStore } from '../src/index.js';

let server: RedisServer;
let client: Redis;
beforeAll(async () => {
  server = await startRedisServer();
  // Without auto-pipelining, which writes in a setImmediate: a command is written when sent.
  client = new Redis(server.url);
});
afterAll(async () => {
  client.disconnect();
  await server.stop();
});

/** Prints Redis's reply to EXISTS key (port and key in argv), from a process of its own. */
const EXISTS = `const [port, key] = process.argv.slice(1);
const s = require('node:net').connect(Number(port), '127.0.0.1', () =>
  s.write('*2\\r\\n$6\\r\\nEXISTS\\r\\n$' + Buffer.byteLength(key) + '\\r\\n' + key + '\\r\\n'));
s.on('data', (d) => { process.stdout.write(d.toString()); s.end(); });`;

/** Blocks this process (no timer, no I/O callback runs) until `done()` holds, 10 s at most. */
function blockUntil(done: () => boolean): void {
  const until = performance.now() + 10_000;
  while (!done()) {
    if (performance.now() > until) throw new Error('Redis did not run the call within 10 s');
  }
}

describe('ShardedStore in a busy process', () => {
  it('a reply that came in time is taken, not counted as a timeout of the shard', async () => {
    const store = new ShardedStore([{ name: 'a', store: new IoRedisStore(client) }], {
      fleetCheck: false,
    });
    const policy = fixedWindow({ limit: 10, window: '1h' });
    const limiter = createLimiter({
      store,
      policy,
      prefix: 'busy',
      timeoutMs: 1000,
      blockCache: false,
      onStoreError: 'throw',
    });
    // The script loaded and the offset to Redis's clock known: the next call is one command.
    await limiter.limit('warm-up');

    const [key] = keysFor('busy', 'x', [policy]);
    const sent = performance.now();
    const decision = limiter.limit('x');
    // Lets the call reach the client, which writes its command: ticks and microtasks only, so
    // no reply can be read meanwhile.
    for (let i = 0; i < 50; i++) await new Promise<void>((r) => process.nextTick(r));
    // Busy until Redis has run the script (it charged: the key exists) and the deadline passed.
    const charged = () =>
      execFileSync(process.execPath, ['-e', EXISTS, String(server.port), key!]).toString();
    blockUntil(() => charged() === ':1\r\n' && performance.now() > sent + 1100);

    await expect(decision).resolves.toMatchObject({ allowed: true, remaining: 9 });
    expect(store.health()[0]).toMatchObject({ state: 'healthy', failures: 0, circuit: 'closed' });
  });
});
