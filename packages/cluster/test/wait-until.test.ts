// A shard that holds a call back while it is busy (a Redis store in a burst: `Store.waitUntil`)
// says when its caller stops waiting. The ShardedStore asks that shard for its callers, and its
// guard waits as long: a busy shard is not a failing one. Before, a burst on shards answering as
// fast as they could timed out in this process, counted as the shards' failures and opened their
// breakers, and every decision after went to the per-process fallback (issue 35).
import { createLimiter, tokenBucket } from '@floodgate/core';
import type { PolicyResult, Store, StoreCall } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import { describe, expect, it } from 'vitest';
import { ShardedStore } from '../src/index.js';

/**
 * A remote-like shard that answers every call after `holdMs`, saying meanwhile (when it has a
 * `waitUntil`) that its caller should wait `graceMs` more from now: a busy store still answering.
 */
class BusyShard implements Store {
  readonly remote = true;
  readonly given: StoreCall[] = [];
  readonly #inner = new MemoryStore();
  constructor(
    readonly holdMs: number,
    readonly graceMs: number,
  ) {}
  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    this.given.push(call);
    return new Promise((resolve, reject) => {
      setTimeout(() => {
        this.#inner.evaluate(call).then(resolve, reject);
      }, this.holdMs);
    });
  }
  reset(keys: readonly string[]): Promise<void> {
    return this.#inner.reset(keys);
  }
}

/** The same shard with the `Store.waitUntil` a busy Redis store has. */
class BusyShardThatSays extends BusyShard {
  waitUntil(call: StoreCall): number | undefined {
    return this.given.includes(call) ? performance.now() + this.graceMs : call.deadline;
  }
}

const policy = tokenBucket({ limit: 3, interval: '1m' });

describe('ShardedStore.waitUntil', () => {
  it('a held call is waited for as long as its shard says: decided by the shard, no failure counted', async () => {
    const shard = new BusyShardThatSays(400, 100);
    const store = new ShardedStore([{ name: 'busy', store: shard }], { fleetCheck: false });
    const limiter = createLimiter({
      store,
      policy,
      prefix: 'held',
      timeoutMs: 100,
      onStoreError: new MemoryStore(),
    });
    const decision = await limiter.limit('a');
    expect(decision.reason).toBeUndefined();
    expect(decision.allowed).toBe(true);
    expect(decision.remaining).toBe(2);
    const [health] = store.health();
    expect(health).toMatchObject({ failures: 0, successes: 1, circuit: 'closed' });
  });

  it('without a shard that says so, the call is given up at its deadline, as before', async () => {
    const shard = new BusyShard(400, 100);
    const store = new ShardedStore([{ name: 'silent', store: shard }], { fleetCheck: false });
    const limiter = createLimiter({
      store,
      policy,
      prefix: 'silent',
      timeoutMs: 100,
      onStoreError: new MemoryStore(),
    });
    const decision = await limiter.limit('a');
    expect(decision.reason).toBe('store-timeout');
    expect(store.health()[0]).toMatchObject({ failures: 1 });
    // Its caller's deadline stands: the sharded store has nothing to move it by.
    const call = shard.given[0]!;
    expect(store.waitUntil(call)).toBe(call.deadline);
  });

  it("passes the caller's ask on when its own timeoutMs gives the shard a copy of the call", async () => {
    const shard = new BusyShardThatSays(50, 100);
    const store = new ShardedStore([{ name: 'busy', store: shard }], {
      fleetCheck: false,
      timeoutMs: 80,
    });
    const limiter = createLimiter({ store, policy, prefix: 'copy', timeoutMs: 1000 });
    await limiter.limit('a');
    const sent = shard.given[0]!;
    // A copy with the sharded store's earlier deadline, still marked as asking `waitUntil`.
    expect(sent.extendable).toBe(true);
    expect(sent.deadline).toBeLessThan(performance.now() + 80);
    // A call that was never handed to a shard: its own deadline.
    const other: StoreCall = { keys: ['k'], policies: [], cost: 1, mode: 'limit', deadline: 5 };
    expect(store.waitUntil(other)).toBe(5);
  });
});
