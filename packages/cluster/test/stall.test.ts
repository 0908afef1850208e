// A stalled shard (its redis-server SIGSTOPped: the connection stays up, nothing answers). The
// deadline of each call must count as that shard's failure when it expires, so its breaker opens
// and its identities are answered at once, not each after a full timeout while the stall lasts.
import { createLimiter, type Decision, fixedWindow } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { keysFor, type RedisServer, startRedisServer } from '@floodgate/testkit/redis';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ShardedStore } from '../src/index.js';

const servers: RedisServer[] = [];
const clients: Redis[] = [];
let stopped: number | undefined;
beforeAll(async () => {
  servers.push(...(await Promise.all([0, 1].map(() => startRedisServer()))));
  for (const s of servers) {
    const c = new Redis(s.url, { enableAutoPipelining: true, retryStrategy: () => 50 });
    c.on('error', () => {});
    clients.push(c);
  }
});
afterEach(() => {
  // Always resumed, whatever the test did, so the next test and afterAll find a live server.
  if (stopped !== undefined) process.kill(stopped, 'SIGCONT');
  stopped = undefined;
});
afterAll(async () => {
  for (const c of clients) c.disconnect();
  await Promise.all(servers.map((s) => s.stop()));
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function stall(server: RedisServer): void {
  stopped = server.pid;
  process.kill(server.pid, 'SIGSTOP');
}

/** Identities that live on shard `name`, and some that do not. */
function split(store: ShardedStore, prefix: string, name: string, n: number) {
  const policies = [fixedWindow({ limit: 100, window: '1h' })];
  const ids = Array.from({ length: 400 }, (_, i) => `${prefix}-${i}`);
  const on = (id: string) => store.locate(keysFor(prefix, id, policies)[0]!);
  return {
    policies,
    stalled: ids.filter((id) => on(id) === name).slice(0, n),
    others: ids.filter((id) => on(id) !== name).slice(0, n),
  };
}

describe('ShardedStore with a stalled shard', () => {
  it('timeouts open that shard’s breaker: 5 decisions wait, the next 25 are answered at once', async () => {
    const store = new ShardedStore(
      [
        { name: 'a', store: new IoRedisStore(clients[0]!) },
        { name: 'b', store: new IoRedisStore(clients[1]!) },
      ],
      // A long cooldown: no probe goes out during the test, however slow the machine.
      { breaker: { failures: 5, cooldownMs: 60_000 }, fleetCheck: false },
    );
    const { policies, stalled, others } = split(store, 'stall', 'b', 30);
    expect(stalled).toHaveLength(30);
    const errors: string[] = [];
    // The default onStoreError: the shards' own in-process fallbacks.
    const limiter = createLimiter({
      store,
      policy: policies,
      prefix: 'stall',
      timeoutMs: 100,
      blockCache: false,
      onError: (e) => errors.push(`${e.code} ${e.message}`),
    });
    stall(servers[1]!);

    const decided: Decision[] = [];
    for (const id of stalled) decided.push(await limiter.limit(id));
    // Without the deadline counting, all 30 were 'store-timeout' and the breaker stayed closed.
    expect(decided.map((d) => d.reason)).toEqual([
      ...Array<string>(5).fill('store-timeout'),
      ...Array<string>(25).fill('store-unavailable'),
    ]);
    expect(decided.every((d) => d.allowed)).toBe(true);
    expect(errors.slice(0, 5).every((m) => /^STORE_TIMEOUT shard "b"/.test(m))).toBe(true);
    expect(
      errors.slice(5).every((m) => /^STORE_UNAVAILABLE shard "b".*breaker is open/.test(m)),
    ).toBe(true);
    const [a, b] = store.health();
    expect(b).toMatchObject({ state: 'failing', circuit: 'open', consecutiveFailures: 5 });
    expect(b!.lastError?.code).toBe('STORE_TIMEOUT');
    expect(a).toMatchObject({ state: 'healthy', circuit: 'closed', failures: 0 });

    // The other shard's identities are decided by Redis as before, meanwhile.
    // (Through a limiter with a long deadline: on a loaded machine, 30 replies at once can take
    // longer than 100 ms, and this checks isolation, not the deadline.)
    const patient = createLimiter({ store, policy: policies, prefix: 'stall', timeoutMs: 10_000 });
    const fine = await Promise.all(others.map((id) => patient.limit(id)));
    expect(fine.every((d) => d.allowed && d.reason === undefined)).toBe(true);

    // The stalled calls' late answers, after SIGCONT, are not taken for a recovery.
    process.kill(servers[1]!.pid, 'SIGCONT');
    stopped = undefined;
    expect(await clients[1]!.ping()).toBe('PONG');
    await sleep(50);
    expect(store.health()[1]).toMatchObject({ state: 'failing', circuit: 'open' });
    expect((await limiter.limit(stalled[0]!)).reason).toBe('store-unavailable');
  });

  it('its own timeoutMs bounds limiters without one, and reset', async () => {
    const store = new ShardedStore(
      [
        { name: 'a', store: new IoRedisStore(clients[0]!) },
        { name: 'b', store: new IoRedisStore(clients[1]!) },
      ],
      { timeoutMs: 100, breaker: { failures: 3, cooldownMs: 60_000 }, fleetCheck: false },
    );
    const { policies, stalled } = split(store, 'own', 'b', 5);
    const limiter = createLimiter({ store, policy: policies, prefix: 'own', blockCache: false });
    stall(servers[1]!);
    // Without a deadline of its own, a limiter without timeoutMs waits as long as the stall.
    await expect(limiter.reset(stalled[0]!)).rejects.toMatchObject({ code: 'STORE_TIMEOUT' });
    const decided = [];
    for (const id of stalled) decided.push((await limiter.limit(id)).reason);
    expect(decided).toEqual([
      'store-timeout',
      'store-timeout',
      'store-unavailable',
      'store-unavailable',
      'store-unavailable',
    ]);
    expect(store.health()[1]).toMatchObject({ state: 'failing', circuit: 'open', failures: 3 });
  });

  it('rejects a timeoutMs a timer cannot wait', () => {
    const m = [{ store: new IoRedisStore(clients[0]!) }];
    for (const timeoutMs of [0, -1, 1.5, 2 ** 31, Number.POSITIVE_INFINITY, '100']) {
      expect(() => new ShardedStore(m, { timeoutMs } as never)).toThrow(/timeoutMs/);
    }
  });
});
