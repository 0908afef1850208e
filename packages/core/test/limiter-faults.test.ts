import { type AddressInfo, connect, createServer } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { BreakerState } from '../src/breaker.js';
import { FloodgateError, isFloodgateError } from '../src/errors.js';
import { fixedWindow, tokenBucket } from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import type { PolicyResult, Store, StoreCall } from '../src/store.js';
import { MapStore } from './map-store.js';

const NOW = 1_000_000;

/**
 * A remote-looking store that runs each call at once, like a script on Redis, but holds the reply
 * until the test releases it: replies can arrive in any order.
 */
class HeldStore extends MapStore {
  readonly held: (() => void)[] = [];
  hold = false;
  constructor() {
    super(() => NOW, true);
  }
  override async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    const hold = this.hold; // decided when the call is made, as the script runs then
    const results = await super.evaluate(call);
    if (hold) await new Promise<void>((r) => this.held.push(r));
    return results;
  }
}

async function rejection(p: Promise<unknown>): Promise<FloodgateError> {
  try {
    await p;
  } catch (e) {
    expect(isFloodgateError(e)).toBe(true);
    return e as FloodgateError;
  }
  throw new Error('expected a rejection');
}

describe('the blocked-key cache never answers looser than the store', () => {
  it('a reset racing an in-flight denial does not put the denial back (defect 1)', async () => {
    const store = new MapStore(() => NOW, true);
    const l = createLimiter({ store, policy: fixedWindow({ limit: 1, window: '1d' }) });
    expect((await l.limit('u')).allowed).toBe(true);
    const [racing] = await Promise.all([l.limit('u'), l.reset('u')]);
    expect(racing.allowed).toBe(false); // it ran before the reset's DEL
    const after = await l.limit('u');
    expect([after.allowed, after.reason]).toEqual([true, undefined]);
  });

  it('a denial whose reply arrives after the reset finished is not cached', async () => {
    const store = new HeldStore();
    const l = createLimiter({ store, policy: fixedWindow({ limit: 1, window: '1d' }) });
    await l.limit('u');
    store.hold = true;
    const denied = l.limit('u');
    store.hold = false;
    await l.reset('u');
    store.held.shift()!();
    expect((await denied).allowed).toBe(false);
    expect((await l.limit('u')).reason).toBeUndefined();
    expect(store.calls).toBe(3);
  });

  it('an admission drops the cached denial: no stale remaining or short wait (defect 4)', async () => {
    const store = new MapStore(() => NOW, true);
    const l = createLimiter({ store, policy: tokenBucket({ limit: 3, interval: '1m' }) });
    expect((await l.limit('u', { cost: 2 })).allowed).toBe(true);
    const denied = await l.limit('u', { cost: 2 });
    expect([denied.allowed, denied.remaining, denied.retryAfterMs]).toEqual([false, 1, 20_000]);
    expect((await l.limit('u', { cost: 1 })).allowed).toBe(true);
    const again = await l.limit('u', { cost: 2 });
    expect([again.allowed, again.remaining, again.retryAfterMs, again.reason]).toEqual([
      false,
      0,
      40_000,
      undefined,
    ]);
  });

  it('a denial that was in flight while an admission finished is not cached', async () => {
    const store = new HeldStore();
    const l = createLimiter({ store, policy: tokenBucket({ limit: 3, interval: '1m' }) });
    await l.limit('u', { cost: 2 }); // one token left
    store.hold = true;
    const denial = l.limit('u', { cost: 2 }); // runs first: denied, reply held
    store.hold = false;
    expect((await l.limit('u', { cost: 1 })).allowed).toBe(true); // runs second, answers first
    store.held.shift()!();
    expect((await denial).retryAfterMs).toBe(20_000); // stale by now
    const next = await l.limit('u', { cost: 2 });
    expect([next.reason, next.retryAfterMs]).toEqual([undefined, 40_000]);
  });
});

describe('errors that are the caller’s reach the caller (defect 5)', () => {
  for (const code of ['INVALID_OPTION', 'INVALID_KEY', 'COST_EXCEEDS_CAPACITY'] as const) {
    it(`${code} from inside the store is thrown, not decided by the fallback`, async () => {
      const fallback = new MapStore(() => NOW);
      const store: Store = {
        remote: true,
        evaluate: () => Promise.reject(new FloodgateError(code, 'now() returned NaN')),
        reset: () => Promise.resolve(),
      };
      const errors: unknown[] = [];
      const l = createLimiter({
        store,
        policy: fixedWindow({ limit: 5, window: '1m' }),
        onStoreError: fallback,
        onError: (e) => errors.push(e),
      });
      expect((await rejection(l.limit('u'))).code).toBe(code);
      expect((await rejection(l.peek('u'))).code).toBe(code);
      expect(fallback.calls).toBe(0);
      expect(errors).toEqual([]);
    });
  }
});

describe('timeouts', () => {
  const hanging = (): Store & { resets: number } => ({
    remote: true,
    resets: 0,
    evaluate: () => new Promise(() => {}),
    reset() {
      this.resets++;
      return new Promise(() => {});
    },
  });

  it('timeoutMs bounds reset() too (defect 6)', async () => {
    const store = hanging();
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 5, window: '1m' }),
      timeoutMs: 30,
    });
    const started = performance.now();
    expect((await rejection(l.reset('u'))).code).toBe('STORE_TIMEOUT');
    expect(performance.now() - started).toBeLessThan(2000);
    expect(store.resets).toBe(1);
  });

  it('a call carries its deadline to the store, and the fallback gets the call without it', async () => {
    const seen: StoreCall[] = [];
    const fallback = new MapStore(() => NOW);
    const original = fallback.evaluate.bind(fallback);
    fallback.evaluate = (call) => {
      seen.push(call);
      return original(call);
    };
    const store: Store = {
      remote: true,
      evaluate(call) {
        seen.push(call);
        return new Promise(() => {});
      },
      reset: () => Promise.resolve(),
    };
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 5, window: '1m' }),
      timeoutMs: 20,
      onStoreError: fallback,
    });
    const before = performance.now();
    const d = await l.limit('u');
    expect(d.reason).toBe('store-timeout');
    expect(seen).toHaveLength(2);
    expect(seen[0]!.deadline).toBeGreaterThanOrEqual(before + 20);
    expect(seen[0]!.deadline).toBeLessThanOrEqual(performance.now());
    expect('deadline' in seen[1]!).toBe(false);
  });

  it('a remote store gets a 250 ms deadline by default; timeoutMs: false and in-process stores none (issue 14.17)', async () => {
    const deadlineOf = async (remote: boolean, timeoutMs?: number | false) => {
      const store = new MapStore(() => NOW, remote);
      const seen: StoreCall[] = [];
      const original = store.evaluate.bind(store);
      store.evaluate = (call) => {
        seen.push(call);
        return original(call);
      };
      const policy = fixedWindow({ limit: 5, window: '1m' });
      const options = timeoutMs === undefined ? {} : { timeoutMs };
      const limiter = createLimiter({ store, policy, ...options });
      const before = performance.now();
      await limiter.limit('u');
      const after = performance.now();
      const deadline = seen[0]!.deadline;
      // The deadline is set between before and after: the timeout lies in [deadline - after, deadline - before].
      return deadline === undefined ? undefined : [deadline - after, deadline - before];
    };
    const [low, high] = (await deadlineOf(true))!;
    expect(low).toBeLessThanOrEqual(250);
    expect(high).toBeGreaterThanOrEqual(250);
    expect((await deadlineOf(true, 40))![0]).toBeLessThanOrEqual(40);
    expect((await deadlineOf(true, 40))![1]).toBeLessThan(250);
    expect(await deadlineOf(true, false)).toBeUndefined();
    expect(await deadlineOf(false)).toBeUndefined();
  });

  it('the default deadline answers a remote store that hangs from the fallback, and opens the breaker (issue 14.17)', async () => {
    vi.useFakeTimers();
    const hanging: Store = {
      remote: true,
      evaluate: () => new Promise(() => {}),
      reset: () => new Promise(() => {}),
      fallback: () => new MapStore(() => NOW),
    };
    const states: BreakerState[] = [];
    const l = createLimiter({
      store: hanging,
      policy: fixedWindow({ limit: 2, window: '1m' }),
      breaker: { onStateChange: (s) => states.push(s) },
    });
    const reasons: (string | undefined)[] = [];
    const allowed: boolean[] = [];
    try {
      for (let i = 0; i < 6; i++) {
        const pending = l.limit('u');
        await vi.advanceTimersByTimeAsync(250);
        const d = await pending;
        reasons.push(d.reason);
        allowed.push(d.allowed);
      }
    } finally {
      vi.useRealTimers();
    }
    expect(reasons).toEqual([...Array(5).fill('store-timeout'), 'store-unavailable']);
    expect(allowed).toEqual([true, true, false, false, false, false]);
    expect(states).toEqual(['open']);
  });

  it('a reply that arrived in time is not beaten by a timer that fired late because the process was busy', async () => {
    // A real socket: the server replies at once, then blocks the event loop past timeoutMs, so
    // the timer is overdue when the reply is read (timers run before I/O in each loop turn).
    const server = createServer((socket) =>
      socket
        .on('error', () => {})
        .on('data', () => {
          socket.write('r');
          const end = performance.now() + 150;
          while (performance.now() < end) {} // busy, as under GC or CPU-bound work
        }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const socket = connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    const inner = new MapStore(() => NOW);
    const store: Store = {
      remote: true,
      evaluate: (call) =>
        new Promise((resolve, reject) => {
          socket.once('data', () => inner.evaluate(call).then(resolve, reject));
          socket.write('q');
        }),
      reset: () => Promise.resolve(),
    };
    try {
      const l = createLimiter({
        store,
        policy: fixedWindow({ limit: 5, window: '1m' }),
        timeoutMs: 50,
        onStoreError: 'throw',
      });
      for (let i = 0; i < 3; i++) expect((await l.limit('u')).remaining).toBe(4 - i);
    } finally {
      socket.destroy();
      server.close();
    }
  });

  it('timeoutMs must be a positive integer or false', () => {
    const store = new MapStore(() => NOW, true);
    const policy = fixedWindow({ limit: 5, window: '1m' });
    for (const timeoutMs of [0, -1, 1.5, true, '250', null]) {
      expect(() => createLimiter({ store, policy, timeoutMs: timeoutMs as number })).toThrow(
        /timeoutMs must be a positive integer or false/,
      );
    }
  });
});

describe('cost', () => {
  it('cost: null is INVALID_COST, and the store is not touched (defect 8)', async () => {
    const store = new MapStore(() => NOW);
    const l = createLimiter({ store, policy: fixedWindow({ limit: 5, window: '1m' }) });
    const e = await rejection(l.limit('u', { cost: null as unknown as number }));
    expect(e.code).toBe('INVALID_COST');
    expect(store.calls).toBe(0);
    expect((await l.limit('u', { cost: undefined })).remaining).toBe(4); // absent means 1
  });
});

describe('the circuit breaker', () => {
  // The breaker runs on performance.now(): a test moves it by hand, so a loaded machine's pauses
  // cannot count as a cooldown.
  let t = 1_000;
  const elapse = (ms: number) => {
    t += ms;
  };
  afterEach(() => {
    vi.restoreAllMocks();
  });
  const frozen = () => vi.spyOn(performance, 'now').mockImplementation(() => t);

  function flaky() {
    const fallback = new MapStore(() => NOW);
    const store = {
      remote: true as const,
      calls: 0,
      up: false,
      inner: new MapStore(() => NOW),
      evaluate(call: StoreCall) {
        this.calls++;
        return this.up ? this.inner.evaluate(call) : Promise.reject(new Error('ECONNREFUSED'));
      },
      reset(keys: readonly string[]) {
        this.calls++;
        return this.up ? this.inner.reset(keys) : Promise.reject(new Error('ECONNREFUSED'));
      },
    };
    return { store, fallback };
  }

  it('opens after `failures` failures, answers without the store, probes after the cooldown, closes', async () => {
    frozen();
    const { store, fallback } = flaky();
    const states: BreakerState[] = [];
    const errors: FloodgateError[] = [];
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 100, window: '1m' }),
      onStoreError: fallback,
      onError: (e) => errors.push(e),
      breaker: {
        failures: 3,
        windowMs: 10_000,
        cooldownMs: 60,
        onStateChange: (s) => states.push(s),
      },
    });
    for (let i = 0; i < 3; i++) expect((await l.limit('u')).reason).toBe('store-unavailable');
    expect(states).toEqual(['open']);
    for (let i = 0; i < 50; i++) expect((await l.limit('u')).reason).toBe('store-unavailable');
    expect(store.calls).toBe(3); // open: the store is not asked
    expect(errors).toHaveLength(3); // one per real failure, not per short-circuited call
    expect(fallback.calls).toBe(53);
    elapse(80);
    expect((await l.limit('u')).reason).toBe('store-unavailable'); // the probe fails
    expect(store.calls).toBe(4);
    expect(states).toEqual(['open', 'half-open', 'open']);
    store.up = true;
    elapse(80);
    const probes = await Promise.all([l.limit('u'), l.limit('u'), l.limit('u')]);
    // One probe at a time: the others are still answered by the fallback.
    expect(probes.map((d) => d.reason)).toEqual([
      undefined,
      'store-unavailable',
      'store-unavailable',
    ]);
    expect(states).toEqual(['open', 'half-open', 'open', 'half-open', 'closed']);
    expect((await l.limit('u')).reason).toBeUndefined();
  });

  it('failures spread wider than windowMs do not open it', async () => {
    frozen();
    const { store, fallback } = flaky();
    const states: BreakerState[] = [];
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 100, window: '1m' }),
      onStoreError: fallback,
      breaker: { failures: 2, windowMs: 30, onStateChange: (s) => states.push(s) },
    });
    await l.limit('u');
    elapse(60);
    await l.limit('u');
    expect(states).toEqual([]);
    expect(store.calls).toBe(2);
  });

  it('is on by default for remote stores, off for in-process ones, and can be turned off', async () => {
    for (const [remote, breaker, calls] of [
      [true, undefined, 5],
      [false, undefined, 20],
      [true, false, 20],
    ] as const) {
      const { store, fallback } = flaky();
      const l = createLimiter({
        store: { ...store, remote, evaluate: store.evaluate.bind(store) },
        policy: fixedWindow({ limit: 100, window: '1m' }),
        onStoreError: fallback,
        ...(breaker === undefined ? {} : { breaker }),
      });
      for (let i = 0; i < 20; i++) await l.limit('u');
      expect(store.calls).toBe(calls);
    }
  });

  it('with an open breaker, reset() fails at once with STORE_UNAVAILABLE', async () => {
    const { store, fallback } = flaky();
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 100, window: '1m' }),
      onStoreError: fallback,
      breaker: { failures: 1, cooldownMs: 60_000 },
    });
    await l.limit('u');
    const calls = store.calls;
    expect((await rejection(l.reset('u'))).message).toMatch(/circuit breaker is open/);
    expect(store.calls).toBe(calls);
  });

  it('bad breaker options are INVALID_OPTION', () => {
    for (const breaker of [
      { failures: 0 },
      { cooldownMs: 1.5 },
      { probes: -1 },
      { typo: 1 },
      'yes',
    ]) {
      expect(() =>
        createLimiter({
          store: new MapStore(),
          policy: fixedWindow({ limit: 1, window: '1m' }),
          breaker: breaker as never,
        }),
      ).toThrow(/breaker/);
    }
  });
});
