// Per-identity overrides (`limiter.override`) on every store: raised, lowered and blocked
// limits on the identity's count as it stands, shared by every limiter on the store, ending by
// themselves; where they live and what they cost (overrides-store.ts); random traces against the
// reference (overrides-differential.ts).
import { fixedWindow, slidingWindowLog, tokenBucket } from '@floodgate/core';
import type { Harness } from './harness.js';
import { registerOverrideTraces } from './overrides-differential.js';
import { HOUR, nearOf, setup } from './overrides-setup.js';
import { registerOverrideStoreTests } from './overrides-store.js';

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Per-identity overrides: set, read and cleared at runtime, stored beside the counts. */
export function registerOverrides(h: Harness): void {
  const near = nearOf(h);

  h.api.describe('overrides: per identity, in the store, read by the same call', () => {
    h.test('a raised limit admits more at once, counting what was used', async (run) => {
      const { limiter, now } = setup(run, fixedWindow({ limit: 2, window: '1d' }));
      await limiter.limit('r');
      await limiter.limit('r');
      h.expect((await limiter.limit('r')).allowed, 'at the configured limit').toBe(false);
      const until = now() + HOUR;
      await limiter.override('r', { limit: 5, until: new Date(until) });
      const d = await limiter.limit('r');
      h.expect([d.allowed, d.limit, d.remaining], 'the 2 used stay used: 2 of 5 left').toEqual([
        true,
        5,
        2,
      ]);
      h.expect(d.policies[0]!.override, 'the part says which override').toEqual({
        limit: 5,
        until,
      });
      h.expect(d.override, 'the decision says until when').toEqual({ until });
      await limiter.limit('r');
      await limiter.limit('r');
      h.expect((await limiter.limit('r')).allowed, '5 in all, then denied').toBe(false);
      h.expect((await limiter.limit('other')).override, 'another identity').toBe(undefined);
    });

    h.test('a lowered limit denies at once; clear gives the own limit back', async (run) => {
      const { limiter, now } = setup(run, fixedWindow({ limit: 10, window: '1d' }));
      await limiter.limit('l', { cost: 4 });
      await limiter.override('l', { limit: 3, until: now() + HOUR });
      const d = await limiter.limit('l');
      h.expect([d.allowed, d.remaining, d.limit], '4 used ≥ 3: denied').toEqual([false, 0, 3]);
      const peek = await limiter.peek('l');
      h.expect([peek.allowed, peek.limit], 'peek runs on the override too').toEqual([false, 3]);
      await limiter.overrides.clear('l');
      const after = await limiter.limit('l');
      h.expect([after.allowed, after.remaining], 'back to 10: 5 used').toEqual([true, 5]);
      h.expect(after.override, 'no override').toBe(undefined);
    });

    h.test('a bucket raised and lowered keeps its time to full', async (run) => {
      const { limiter, now } = setup(run, tokenBucket({ limit: 4, interval: '1d' }));
      await limiter.limit('b', { cost: 3 });
      await limiter.override('b', { limit: 8, until: now() + HOUR });
      // The bucket's time to full carries over (18 h at 4 a day): at 8 a day 6 units, 2 left.
      const raised = await limiter.peek('b');
      h.expect([raised.limit, raised.remaining], '18 h to full, at 8 a day').toEqual([8, 2]);
      await limiter.override('b', { limit: 2, until: now() + HOUR });
      h.expect((await limiter.limit('b')).allowed, '3 used > a capacity of 2').toBe(false);
    });

    h.test('limit 0 blocks every policy until `until`, charging nothing', async (run) => {
      const policies = [
        tokenBucket({ limit: 100, interval: '1d' }),
        fixedWindow({ limit: 50, window: '1d' }),
      ];
      const { limiter, now } = setup(run, policies);
      await limiter.limit('x');
      const until = now() + HOUR;
      await limiter.override('x', { limit: 0, until });
      for (let i = 0; i < 3; i++) {
        const left = until - now();
        const d = await limiter.limit('x');
        h.expect(d.allowed, `blocked call ${i}`).toBe(false);
        near(d.retryAfterMs, left, `blocked call ${i}: retry when the block ends`);
        h.expect(
          d.policies.map((p) => [p.limit, p.remaining, p.override?.limit]),
          'own limits shown, nothing left, a block',
        ).toEqual([
          [100, 0, 0],
          [50, 0, 0],
        ]);
        h.expect(d.override?.until, 'until').toBe(until);
      }
      h.expect((await limiter.peek('x')).allowed, 'peek reports the block').toBe(false);
      h.expect(await limiter.overrides.get('x'), 'get').toEqual({
        limit: { [policies[0]!.name]: 0, [policies[1]!.name]: 0 },
        until,
      });
      await limiter.overrides.clear('x');
      const after = await limiter.limit('x');
      h.expect(
        after.policies.map((p) => p.remaining),
        'the blocked calls charged nothing',
      ).toEqual([98, 48]);
    });

    h.test(
      'several policies: named ones take the override, the rest keep their own',
      async (run) => {
        const burst = tokenBucket({ limit: 10, interval: '1d', name: 'burst' });
        const daily = fixedWindow({ limit: 1000, window: '1d', name: 'daily' });
        const { limiter, now } = setup(run, [burst, daily]);
        const until = now() + HOUR;
        await limiter.override('n', { limit: { burst: 20 }, until });
        const d = await limiter.limit('n');
        h.expect(
          d.policies.map((p) => [p.limit, p.remaining, p.override]),
          'burst overridden',
        ).toEqual([
          [20, 19, { limit: 20, until }],
          [1000, 999, undefined],
        ]);
        h.expect(await limiter.overrides.get('n'), 'get').toEqual({ limit: { burst: 20 }, until });
        // A new override replaces the whole one: burst back to its own limit.
        await limiter.override('n', { limit: { daily: 0 }, until });
        const blocked = await limiter.limit('n');
        h.expect(blocked.allowed, 'daily blocks').toBe(false);
        h.expect(blocked.policies[0]!.limit, 'burst on its own limit').toBe(10);
        h.expect(await limiter.overrides.get('n'), 'get').toEqual({ limit: { daily: 0 }, until });
      },
    );

    h.test('another limiter (another process) honours it at its next decision', async (run) => {
      const policy = slidingWindowLog({ limit: 1, window: '1h' });
      const a = setup(run, policy);
      const b = setup(run, policy);
      await b.limiter.limit('s');
      h.expect((await b.limiter.limit('s')).allowed, 'b at its limit').toBe(false);
      const until = a.now() + HOUR;
      await a.limiter.override('s', { limit: 3, until });
      const seen = await b.limiter.limit('s');
      h.expect([seen.allowed, seen.limit, seen.override?.until], 'b sees it').toEqual([
        true,
        3,
        until,
      ]);
      h.expect(await b.limiter.overrides.get('s'), 'b reads it').toEqual({ limit: 3, until });
      await a.limiter.overrides.clear('s');
      h.expect((await b.limiter.limit('s')).allowed, 'cleared: b back to 1').toBe(false);
      h.expect(await b.limiter.overrides.get('s'), 'nothing stored').toBe(undefined);
    });

    registerOverrideStoreTests(h);

    if (!h.controlsTime) {
      h.test('an override ends by itself at until (server clock)', async (run) => {
        const { limiter, now } = setup(run, fixedWindow({ limit: 1, window: '1d' }));
        await limiter.override('e', { limit: 0, until: now() + 400 });
        h.expect((await limiter.limit('e')).allowed, 'blocked').toBe(false);
        await sleep(600);
        h.expect((await limiter.limit('e')).allowed, 'the block ended by itself').toBe(true);
        h.expect(await limiter.overrides.get('e'), 'nothing stored').toBe(undefined);
      });
    }
  });

  if (!h.controlsTime) return;
  h.api.describe('overrides on the suite clock', () => {
    h.test('an override ends by itself at until, to the ms', async (run) => {
      const { limiter } = setup(run, fixedWindow({ limit: 2, window: '1d' }));
      run.at(1000);
      await limiter.limit('e');
      await limiter.override('e', { limit: 0, until: run.now + 10_000 });
      const d = await limiter.limit('e');
      h.expect([d.allowed, d.retryAfterMs], 'blocked, retry at until').toEqual([false, 10_000]);
      run.advance(9_999);
      h.expect((await limiter.limit('e')).retryAfterMs, 'a ms before').toBe(1);
      run.advance(1);
      // The block is over, and charged nothing: the day's count (1 of 2) decides again.
      const after = await limiter.limit('e');
      h.expect([after.allowed, after.override], 'its own limit again').toEqual([true, undefined]);
      await limiter.override('e', { limit: 3, until: run.now + 5_000 });
      h.expect((await limiter.limit('e')).allowed, 'raised: a third').toBe(true);
      run.advance(5_000);
      const ended = await limiter.limit('e');
      h.expect([ended.allowed, ended.limit], 'the raise ended: 3 used of 2').toEqual([false, 2]);
      h.expect(await limiter.overrides.get('e'), 'nothing in force').toBe(undefined);
    });
    registerOverrideTraces(h);
  });
}
