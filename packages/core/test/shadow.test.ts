import { describe, expect, it } from 'vitest';
import { isFloodgateError } from '../src/errors.js';
import {
  type DecisionEvent,
  fixedWindow,
  leakyBucket,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import type { PolicyResult, StoreCall } from '../src/store.js';
import { MapStore } from './map-store.js';

class SyncStore extends MapStore {
  evaluateSync(call: StoreCall): readonly PolicyResult[] {
    this.calls++;
    return this.decide(call);
  }
}

describe('shadow mode', () => {
  it('every factory takes shadow; the id (the state) is the enforced copy’s', () => {
    const pairs = [
      [
        fixedWindow({ limit: 2, window: '1s' }),
        fixedWindow({ limit: 2, window: '1s', shadow: true }),
      ],
      [
        slidingWindow({ limit: 2, window: '1s' }),
        slidingWindow({ limit: 2, window: '1s', shadow: true }),
      ],
      [
        slidingWindowLog({ limit: 2, window: '1s' }),
        slidingWindowLog({ limit: 2, window: '1s', shadow: true }),
      ],
      [
        tokenBucket({ limit: 2, interval: '1s' }),
        tokenBucket({ limit: 2, interval: '1s', shadow: true }),
      ],
      [
        leakyBucket({ limit: 2, interval: '1s', queue: 1 }),
        leakyBucket({ limit: 2, interval: '1s', queue: 1, shadow: true }),
      ],
      [
        quota({ limit: 2, per: 'day', timeZone: 'Europe/Paris' }),
        quota({ limit: 2, per: 'day', timeZone: 'Europe/Paris', shadow: true }),
      ],
    ] as const;
    for (const [enforced, shadowed] of pairs) {
      expect(shadowed.id).toBe(enforced.id);
      expect(shadowed.shadow).toBe(true);
      expect('shadow' in enforced).toBe(false);
      expect(Object.isFrozen(shadowed)).toBe(true);
      expect({ ...shadowed, shadow: undefined }).toEqual({ ...enforced, shadow: undefined });
    }
    expect('shadow' in tokenBucket({ limit: 2, interval: '1s', shadow: false })).toBe(false);
    try {
      tokenBucket({ limit: 2, interval: '1s', shadow: 'yes' as unknown as boolean });
      expect.unreachable();
    } catch (e) {
      expect(isFloodgateError(e) && e.code).toBe('INVALID_POLICY');
    }
  });

  for (const sync of [false, true]) {
    it(`limiter-level: allowed, shadowDenied with the would-be wait, charges as enforce (${sync ? 'sync' : 'async'} store)`, async () => {
      const now = 1_000_000;
      const store = sync ? new SyncStore(() => now) : new MapStore(() => now);
      const policy = fixedWindow({ limit: 2, window: '1s' });
      const shadow = createLimiter({ store, policy, shadow: true });
      expect(shadow.shadow).toBe(true);
      const enforce = createLimiter({
        store: sync ? new SyncStore(() => now) : new MapStore(() => now),
        policy,
      });
      for (let i = 0; i < 4; i++) {
        const s = await shadow.limit('u');
        const e = await enforce.limit('u');
        expect(s.allowed).toBe(true);
        if (e.allowed) {
          expect(s).toEqual(e); // admissions are untouched
          expect('shadowDenied' in s).toBe(false);
        } else {
          const marked = { ...e.binding, shadow: true };
          expect(s).toEqual({
            ...e,
            allowed: true,
            shadowDenied: true,
            policies: [marked],
            binding: marked,
          });
          expect(s.binding).toBe(s.policies[0]);
          expect(s.retryAfterMs).toBeGreaterThan(0);
          expect(s.binding.allowed).toBe(false);
        }
      }
      // The state is the enforced one: 2 charged, the would-be denials charged nothing.
      expect((await shadow.peek('u')).remaining).toBe(0);
      expect((await enforce.peek('u')).remaining).toBe(0);
    });
  }

  it('per policy: the enforced policies decide and charge as if the shadowed ones were absent', async () => {
    let now = 1_000_000;
    const store = new MapStore(() => now);
    const tight = fixedWindow({ limit: 1, window: '10s', name: 'tight', shadow: true });
    const loose = fixedWindow({ limit: 3, window: '1s', name: 'loose' });
    const l = createLimiter({ store, policy: [tight, loose] });
    expect((await l.limit('u')).allowed).toBe(true);
    const second = await l.limit('u');
    expect(second).toMatchObject({ allowed: true, shadowDenied: true, retryAfterMs: 0 });
    // What a client is shown is the enforced policy's alone; the shadowed one is reported apart.
    expect(second.binding.name).toBe('loose');
    expect(second.policies.map((p) => p.name)).toEqual(['loose']);
    expect(second.remaining).toBe(1);
    expect(second.shadowed).toMatchObject([{ name: 'tight', allowed: false, shadow: true }]);
    expect(l.shadow).toBe(false);
    // The would-be denial charged the enforced policy (as if alone) and not the shadowed one.
    const after = await l.peek('u');
    expect(after.policies[0]!.remaining).toBe(1);
    expect(after.shadowed![0]!.remaining).toBe(0);
    expect((await l.limit('u')).allowed).toBe(true);
    expect((await l.limit('u')).allowed).toBe(false); // loose's 3, enforced
    // now deny by the enforced policy too
    const both = createLimiter({
      store,
      policy: [tight, fixedWindow({ limit: 1, window: '2s', name: 'enforced' })],
    });
    await both.limit('v');
    now += 500;
    const d = await both.limit('v');
    expect(d.allowed).toBe(false);
    expect('shadowDenied' in d).toBe(false);
    expect(d.binding.name).toBe('enforced');
    expect(d.retryAfterMs).toBe(1_500); // the enforced policy's wait, not the shadowed 9.5 s
  });

  it('a shadow denial is never cached as a denial by the blocked-key cache', async () => {
    const store = new MapStore(() => 1_000_000, true);
    const l = createLimiter({
      store,
      policy: fixedWindow({ limit: 1, window: '1m' }),
      shadow: true,
      timeoutMs: false,
      breaker: false,
    });
    await l.limit('u');
    const calls = store.calls;
    for (let i = 0; i < 3; i++) {
      const d = await l.limit('u');
      expect(d).toMatchObject({ allowed: true, shadowDenied: true });
      expect(d.reason).toBeUndefined();
    }
    expect(store.calls).toBe(calls + 3); // each asked the store
  });

  it('an enforced denial of a partly shadowed limiter is cached and still mapped', async () => {
    const store = new MapStore(() => 1_000_000, true);
    const l = createLimiter({
      store,
      policy: [
        fixedWindow({ limit: 1, window: '1m', name: 'e' }),
        fixedWindow({ limit: 1, window: '1h', name: 's', shadow: true }),
      ],
      timeoutMs: false,
      breaker: false,
    });
    await l.limit('u');
    const first = await l.limit('u');
    const cached = await l.limit('u');
    expect(first.allowed).toBe(false);
    expect(cached.reason).toBe('blocked-cache');
    expect(cached.binding.name).toBe('e');
    expect(cached.retryAfterMs).toBe(first.retryAfterMs);
  });

  it("a fallback 'deny' in shadow mode is reported, not enforced", async () => {
    const events: DecisionEvent[] = [];
    const l = createLimiter({
      store: { evaluate: () => Promise.reject(new Error('down')), reset: async () => {} },
      policy: fixedWindow({ limit: 1, window: '1m' }),
      shadow: true,
      onStoreError: 'deny',
      onDecision: (e) => events.push(e),
    });
    const d = await l.limit('u');
    expect(d).toMatchObject({ allowed: true, shadowDenied: true, reason: 'store-unavailable' });
    expect(events.map((e) => e.outcome)).toEqual(['fallback']);
  });

  it('rejects a shadow option that is not a boolean', () => {
    expect(() =>
      createLimiter({
        store: new MapStore(),
        policy: fixedWindow({ limit: 1, window: '1s' }),
        shadow: 1 as unknown as boolean,
      }),
    ).toThrow(/shadow must be true or false/);
  });
});
