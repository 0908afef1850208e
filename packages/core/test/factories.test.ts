import { describe, expect, it } from 'vitest';
import { isFloodgateError } from '../src/errors.js';
import {
  fixedWindow,
  leakyBucket,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { MAX_LOG_LIMIT } from '../src/store.js';

function thrown(fn: () => unknown): { code?: string; message?: string } {
  try {
    fn();
  } catch (e) {
    expect(isFloodgateError(e)).toBe(true);
    return e as { code: string; message: string };
  }
  return {};
}

describe('policy factories', () => {
  it('window policies: plain data, named and identified by what they count', () => {
    expect(fixedWindow({ limit: 100, window: '1m' })).toEqual({
      kind: 'fixedWindow',
      name: '100-per-1m',
      id: fixedWindow({ limit: 100, window: 60_000 }).id,
      limit: 100,
      windowMs: 60_000,
      capacity: 100,
      params: [100, 60_000, 0],
    });
    expect(slidingWindow({ limit: 5, window: 1500 }).id).toMatch(/^sw:[\w-]{5}$/);
    expect(slidingWindow({ limit: 5, window: 1500 }).name).toBe('5-per-1500ms');
    expect(slidingWindowLog({ limit: 5, window: '2h', name: 'hourly' })).toMatchObject({
      kind: 'slidingWindowLog',
      name: 'hourly',
      id: expect.stringMatching(/^swl:[\w-]{5}$/),
      capacity: 5,
    });
  });

  it('tokenBucket counts in ticks: one unit = interval/g, one ms = limit/g (g = gcd); then its fill time at its limit', () => {
    const p = tokenBucket({ limit: 7, interval: '1m' });
    expect([p.capacity, ...p.params]).toEqual([7, 7, 60_000, 7, 420_000]);
    const q = tokenBucket({ limit: 10, interval: '1s', burst: 25 });
    // Its interval in ticks (1000 ms × 1 tick), where its burst fills in 2500.
    expect([q.capacity, ...q.params, q.name]).toEqual([25, 25, 100, 1, 1000, '10-per-1s']);
  });

  it('leakyBucket: capacity is queue + 1 (the one starting now and those waiting)', () => {
    const p = leakyBucket({ limit: 3, interval: '1s', queue: 4 });
    expect([p.kind, p.capacity, ...p.params]).toEqual(['leakyBucket', 5, 5, 1000, 3, 3000]);
  });

  it('ids are short: the kind tag and 5 characters of a hash of what the policy counts', () => {
    for (const p of [
      fixedWindow({ limit: 1_000_000, window: '7d' }),
      tokenBucket({ limit: 123_456, interval: '1h', burst: 999_999 }),
      leakyBucket({ limit: 3, interval: '1s', queue: 4 }),
    ]) {
      expect(p.id).toMatch(/^(fw|sw|swl|tb|lb):[A-Za-z0-9_-]{5}$/);
    }
    // The id follows what is counted: the interval, not the rate.
    expect(tokenBucket({ limit: 10, interval: '1s' }).id).not.toBe(
      tokenBucket({ limit: 20, interval: '2s', burst: 10 }).id,
    );
  });

  it('the same kind, window and given name give the same id whatever the limit; others differ', () => {
    // A limit, a burst or a queue is read at each decision: the count stays where it was.
    expect(fixedWindow({ limit: 5, window: '1s' }).id).toBe(
      fixedWindow({ limit: 500, window: 1000 }).id,
    );
    expect(tokenBucket({ limit: 5, interval: '1s', name: 'api' }).id).toBe(
      tokenBucket({ limit: 50, interval: 1000, burst: 7, name: 'api' }).id,
    );
    expect(leakyBucket({ limit: 5, interval: '1s', queue: 1 }).id).toBe(
      leakyBucket({ limit: 9, interval: 1000, queue: 20 }).id,
    );
    // A default name ('5-per-1s') follows the limit, so it is not part of the id; a name given
    // is, even when it spells the default.
    expect(fixedWindow({ limit: 5, window: '1s', name: '5-per-1s' }).id).not.toBe(
      fixedWindow({ limit: 5, window: 1000 }).id,
    );
    const ids = [
      fixedWindow({ limit: 5, window: 1000 }),
      fixedWindow({ limit: 5, window: 1000, name: 'a' }),
      fixedWindow({ limit: 5, window: 1000, name: 'b' }),
      slidingWindow({ limit: 5, window: 1000 }),
      slidingWindowLog({ limit: 5, window: 1000 }),
      tokenBucket({ limit: 5, interval: 1000 }),
      leakyBucket({ limit: 5, interval: 1000, queue: 5 }),
      fixedWindow({ limit: 5, window: 100 }),
      fixedWindow({ limit: 5, window: 1100 }),
    ].map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('policies are frozen', () => {
    const p = tokenBucket({ limit: 5, interval: 1000 });
    expect(Object.isFrozen(p)).toBe(true);
    expect(Object.isFrozen(p.params)).toBe(true);
  });

  it('errors name the factory and the field', () => {
    expect(thrown(() => tokenBucket({ limit: 5, interval: 'abc' as never }))).toMatchObject({
      code: 'INVALID_POLICY',
      message: expect.stringContaining('tokenBucket: interval'),
    });
    expect(thrown(() => leakyBucket({ limit: 5, interval: '1s', queue: 0 }))).toMatchObject({
      code: 'INVALID_POLICY',
      message: expect.stringContaining('leakyBucket: queue'),
    });
    expect(thrown(() => fixedWindow({ limit: 5, window: '1s', windw: 3 } as never))).toMatchObject({
      code: 'INVALID_POLICY',
      message: expect.stringContaining('windw'),
    });
    expect(thrown(() => tokenBucket({ limit: 0, interval: '1s', burst: 3 })).message).toContain(
      'limit',
    );
  });

  it('refuses parameters whose products would not stay exact integers', () => {
    expect(thrown(() => fixedWindow({ limit: 2 ** 30, window: 2 ** 23 })).code).toBe(
      'INVALID_POLICY',
    );
    expect(thrown(() => tokenBucket({ limit: 1, interval: 2 ** 40, burst: 2 ** 12 })).code).toBe(
      'INVALID_POLICY',
    );
    expect(thrown(() => leakyBucket({ limit: 1, interval: 2 ** 45, queue: 2 ** 8 })).code).toBe(
      'INVALID_POLICY',
    );
    expect(fixedWindow({ limit: 1_000_000, window: '1d' }).capacity).toBe(1_000_000);
    expect(tokenBucket({ limit: 1_000_000, interval: '1d' }).capacity).toBe(1_000_000);
  });

  it('slidingWindowLog refuses limits above MAX_LOG_LIMIT and points to slidingWindow', () => {
    const e = thrown(() => slidingWindowLog({ limit: 1_000_000, window: '1m' }));
    expect(e.code).toBe('INVALID_POLICY');
    expect(e.message).toContain('slidingWindow (');
    expect(thrown(() => slidingWindowLog({ limit: MAX_LOG_LIMIT + 1, window: '1s' })).code).toBe(
      'INVALID_POLICY',
    );
    expect(slidingWindowLog({ limit: MAX_LOG_LIMIT, window: '1s' }).capacity).toBe(MAX_LOG_LIMIT);
    expect(slidingWindow({ limit: 1_000_000, window: '1m' }).capacity).toBe(1_000_000);
  });

  it('tokenBucket: burst may be below or above the limit', () => {
    expect(tokenBucket({ limit: 10, interval: '1s', burst: 1 }).capacity).toBe(1);
    expect(tokenBucket({ limit: 1, interval: '1s', burst: 10 }).capacity).toBe(10);
  });
});
