// createConcurrencyLimiter on its own, over a hand-written LeaseStore that records what it is
// asked: the ids it sends, what a release retries, how store failures surface.
import { describe, expect, it } from 'vitest';
import { createConcurrencyLimiter } from '../src/concurrency.js';
import type { LeaseGrant, LeaseRef, LeaseRequest, LeaseStore } from '../src/lease-types.js';

class RecordingStore implements LeaseStore {
  readonly requests: LeaseRequest[] = [];
  readonly released: LeaseRef[] = [];
  failRelease = 0;
  failAcquire: unknown;
  async acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    if (this.failAcquire !== undefined) throw this.failAcquire;
    this.requests.push(request);
    return { allowed: true, remaining: request.limit - request.cost, retryAfterMs: 0 };
  }
  async releaseLease(lease: LeaseRef): Promise<boolean> {
    if (this.failRelease > 0) {
      this.failRelease--;
      throw new Error('connection reset');
    }
    this.released.push(lease);
    return true;
  }
  async extendLease(): Promise<boolean> {
    return true;
  }
}

describe('createConcurrencyLimiter', () => {
  it('sends a fresh 128-bit hex id per lease, the key with the identity as hash tag', async () => {
    const store = new RecordingStore();
    const limiter = createConcurrencyLimiter({ store, limit: 3, leaseMs: '2s', prefix: 'api' });
    for (let i = 0; i < 200; i++) await limiter.acquire('a{b}');
    const ids = store.requests.map((r) => r.id);
    expect(new Set(ids).size).toBe(200);
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(store.requests[0]).toMatchObject({
      key: 'api:{a%7Bb%7D}:concurrency',
      cost: 1,
      limit: 3,
      leaseMs: 2000,
    });
    expect(limiter.key('a{b}')).toBe('api:{a%7Bb%7D}:concurrency');
  });

  it('a failed release can be retried; once released, never sent again', async () => {
    const store = new RecordingStore();
    const limiter = createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000 });
    const lease = await limiter.acquire('u');
    store.failRelease = 1;
    await expect(lease.release()).rejects.toMatchObject({
      code: 'STORE_UNAVAILABLE',
      cause: expect.objectContaining({ message: 'connection reset' }),
    });
    await Promise.all([lease.release(), lease.release()]);
    await lease.release();
    expect(store.released).toHaveLength(1);
    expect(await lease.extend()).toBe(false);
  });

  it('a store failure on acquire is STORE_UNAVAILABLE with the cause', async () => {
    const store = new RecordingStore();
    const cause = new Error('ECONNREFUSED');
    store.failAcquire = cause;
    const limiter = createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000 });
    await expect(limiter.acquire('u')).rejects.toMatchObject({ code: 'STORE_UNAVAILABLE', cause });
  });

  it('timeoutMs: STORE_TIMEOUT, and a lease granted after that is released when it arrives', async () => {
    const store = new RecordingStore();
    let answer!: (grant: LeaseGrant) => void;
    const slow: LeaseStore = {
      acquireLease: () => new Promise((resolve) => (answer = resolve)),
      releaseLease: (lease) => store.releaseLease(lease),
      extendLease: () => store.extendLease(),
    };
    const limiter = createConcurrencyLimiter({
      store: slow,
      limit: 1,
      leaseMs: 1000,
      timeoutMs: 20,
    });
    await expect(limiter.acquire('u')).rejects.toMatchObject({ code: 'STORE_TIMEOUT' });
    expect(store.released).toHaveLength(0);
    answer({ allowed: true, remaining: 0, retryAfterMs: 0 });
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(store.released).toHaveLength(1);
    expect(store.released[0]!.key).toBe(limiter.key('u'));
    expect(() =>
      createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000, timeoutMs: 0 }),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
  });

  it('refuses unknown options and a bad extend duration', async () => {
    const store = new RecordingStore();
    expect(() =>
      createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000, limt: 2 } as never),
    ).toThrow(expect.objectContaining({ code: 'INVALID_OPTION' }));
    const lease = await createConcurrencyLimiter({ store, limit: 1, leaseMs: 1000 }).acquire('u');
    await expect(lease.extend(-1)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
    await expect(lease.extend('1 fortnight' as never)).rejects.toMatchObject({
      code: 'INVALID_OPTION',
    });
  });
});
