import {
  fixedWindow,
  leakyBucket,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { expectAbsent, expectTtls, fields, type Harness } from './harness.js';
import { DAILY } from './policies.js';

export function registerCharging(h: Harness): void {
  h.api.describe(
    'charging: denials are free, multi-policy is all-or-nothing, peek and reset',
    () => {
      for (const [kind, policy] of DAILY) {
        h.test(`${kind}: a denied call charges nothing`, async (run) => {
          const l = run.limiter(policy);
          const first = await l.limit('a', { cost: 2 });
          h.expect([first.allowed, first.remaining], 'cost 2 of 3').toEqual([true, 1]);
          await expectTtls(h, run, l, 'a', first);
          const ttlBefore = await run.ttl(run.key('a', policy));
          const before = await l.peek('a');
          for (let i = 0; i < 3; i++) {
            for (const cost of [2, 3]) {
              const d = await l.limit('a', { cost });
              h.expect(d.allowed, `cost ${cost} with 1 left`).toBe(false);
              h.expect(d.remaining, 'remaining after a denial').toBe(1);
              h.expect(d.retryAfterMs, 'a denial says when to retry').toBeGreaterThanOrEqual(1);
              h.expect(d.delayMs, 'a denial has no delay').toBe(0);
            }
          }
          const after = await l.peek('a');
          if (h.controlsTime)
            h.expect(fields(after), 'peek before and after denials').toEqual(fields(before));
          else h.expect([after.allowed, after.remaining], 'peek after denials').toEqual([true, 1]);
          if (ttlBefore !== undefined) {
            const ttlAfter = await run.ttl(run.key('a', policy));
            h.expect(ttlAfter, 'a denial does not extend the TTL').toBeLessThanOrEqual(ttlBefore);
            h.expect(ttlAfter, 'a denial does not drop the key').toBeGreaterThanOrEqual(
              ttlBefore - (h.inspect?.ttlSlackMs ?? 0),
            );
          }
          const last = await l.limit('a', { cost: 1 });
          h.expect([last.allowed, last.remaining], 'the unit left is still there').toEqual([
            true,
            0,
          ]);
          const over = await l.limit('a', { cost: 1 });
          h.expect([over.allowed, over.remaining], 'then it is spent').toEqual([false, 0]);
        });
      }

      h.test('several policies: one denial charges none of them', async (run) => {
        const fw = fixedWindow({ limit: 5, window: '1d' });
        const tb = tokenBucket({ limit: 2, interval: '1d' });
        const swl = slidingWindowLog({ limit: 4, window: '1d' });
        const all = run.limiter([fw, tb, swl]);
        const ok = await all.limit('a', { cost: 2 });
        h.expect(ok.allowed, 'first call').toBe(true);
        h.expect(
          ok.policies.map((p) => p.remaining),
          'remaining per policy',
        ).toEqual([3, 0, 2]);
        h.expect([ok.remaining, ok.limit], 'the binding policy is the token bucket').toEqual([
          0, 2,
        ]);
        await expectTtls(h, run, all, 'a', ok);
        for (const cost of [1, 2, 1]) {
          const d = await all.limit('a', { cost });
          h.expect(d.allowed, `cost ${cost}: denied by the bucket`).toBe(false);
          h.expect(
            d.policies.map((p) => p.allowed),
            'who denied',
          ).toEqual([true, false, true]);
          h.expect(
            d.policies.map((p) => p.remaining),
            'nobody charged',
          ).toEqual([3, 0, 2]);
          h.expect(d.retryAfterMs, 'the decision waits for the denying policy').toBe(
            d.policies[1]!.retryAfterMs,
          );
          h.expect(
            d.policies[0]!.retryAfterMs + d.policies[2]!.retryAfterMs,
            'admitting policies: no wait',
          ).toBe(0);
        }
        // The same keys seen through single-policy limiters: the stored counts did not move.
        h.expect((await run.limiter(fw).peek('a')).remaining, 'fixedWindow stored').toBe(3);
        h.expect((await run.limiter(swl).peek('a')).remaining, 'slidingWindowLog stored').toBe(2);
        h.expect((await run.limiter(tb).peek('a')).remaining, 'tokenBucket stored').toBe(0);

        // Denied by the first policy: the later ones are not charged either.
        const first = run.limiter([tb, fw]);
        await run.limiter(tb).limit('b', { cost: 2 });
        const d = await first.limit('b');
        h.expect(
          d.policies.map((p) => [p.allowed, p.remaining]),
          'denied by the first',
        ).toEqual([
          [false, 0],
          [true, 5],
        ]);
        h.expect((await run.limiter(fw).peek('b')).remaining, 'second policy not charged').toBe(5);
        // A policy never admitted before gets no key from a denied call.
        await expectAbsent(h, run, ['b'], [fw, swl]);
      });

      h.test('several policies: the decision combines them', async (run) => {
        const lb = leakyBucket({ limit: 2, interval: '1d', queue: 1, name: 'shaper' });
        const fw = fixedWindow({ limit: 10, window: '1d', name: 'daily' });
        const l = run.limiter([lb, fw]);
        const a = await l.limit('a');
        h.expect([a.allowed, a.delayMs, a.remaining, a.limit], 'first starts now').toEqual([
          true,
          0,
          1,
          2,
        ]);
        h.expect(
          a.policies.map((p) => [p.name, p.kind, p.limit, p.windowMs]),
          'policy parts',
        ).toEqual([
          ['shaper', 'leakyBucket', 2, 86_400_000],
          ['daily', 'fixedWindow', 10, 86_400_000],
        ]);
        await expectTtls(h, run, l, 'a', a);
        const b = await l.limit('a');
        h.expect([b.allowed, b.remaining], 'second waits its turn').toEqual([true, 0]);
        h.expect(b.delayMs, 'second is delayed').toBe(b.policies[0]!.delayMs);
        if (h.controlsTime) h.expect(b.delayMs, 'by interval / limit').toBe(43_200_000);
        else h.expect(b.delayMs, 'by at most interval / limit').toBeLessThanOrEqual(43_200_000);
        h.expect(b.delayMs, 'by nearly interval / limit').toBeGreaterThanOrEqual(43_000_000);
        h.expect(b.resetAfterMs, 'resetAfterMs: the largest').toBe(
          Math.max(b.policies[0]!.resetAfterMs, b.policies[1]!.resetAfterMs),
        );
        await expectTtls(h, run, l, 'a', b);
        const c = await l.limit('a');
        h.expect([c.allowed, c.delayMs, c.remaining], 'queue full').toEqual([false, 0, 0]);
        h.expect(c.policies[1]!.remaining, 'the window was not charged').toBe(8);
      });

      h.test('peek consumes nothing and writes nothing', async (run) => {
        for (const [kind, policy] of DAILY) {
          const l = run.limiter(policy);
          for (let i = 0; i < 5; i++) {
            const p = await l.peek('a');
            h.expect(fields(p), `${kind}: peek on an empty key`).toEqual({
              allowed: true,
              limit: 3,
              remaining: 3,
              resetAfterMs: 0,
              retryAfterMs: 0,
              delayMs: 0,
            });
          }
          await expectAbsent(h, run, ['a'], [policy]);
          const d = await l.limit('a', { cost: 3 });
          h.expect([d.allowed, d.remaining], `${kind}: the whole capacity is still there`).toEqual([
            true,
            0,
          ]);
          const spent = await l.peek('a');
          h.expect([spent.allowed, spent.remaining], `${kind}: peek on a spent key`).toEqual([
            false,
            0,
          ]);
          h.expect(
            spent.retryAfterMs,
            `${kind}: peek says when one unit passes`,
          ).toBeGreaterThanOrEqual(1);
          if (h.controlsTime) {
            const denied = await l.limit('a');
            h.expect(fields(spent), `${kind}: peek = a denied limit() of one unit`).toEqual(
              fields(denied),
            );
          }
        }
        const keys = await run.liveKeys();
        if (keys !== undefined) {
          h.expect(keys, 'only the charged keys exist').toEqual(
            DAILY.map(([, p]) => run.key('a', p)).sort(),
          );
        }
      });

      h.test('reset restores the empty state of one identity only', async (run) => {
        const policies = DAILY.map(([, p]) => p);
        const l = run.limiter(policies);
        h.expect((await l.limit('a', { cost: 3 })).allowed, 'a spends all').toBe(true);
        h.expect((await l.limit('a')).allowed, 'a is spent').toBe(false);
        h.expect((await l.limit('b', { cost: 1 })).allowed, 'b spends one').toBe(true);
        const fresh = await l.peek('never-used');
        await l.reset('a');
        await expectAbsent(h, run, ['a'], policies);
        const p = await l.peek('a');
        h.expect(
          p.policies.map((x) => [x.allowed, x.remaining, x.resetAfterMs]),
          'a is empty',
        ).toEqual(policies.map(() => [true, 3, 0]));
        h.expect(fields(p), 'a looks like a never-used identity').toEqual(fields(fresh));
        h.expect((await l.peek('b')).remaining, 'b keeps its usage').toBe(2);
        await l.reset('never-used');
        await expectAbsent(h, run, ['never-used'], policies);
        h.expect((await l.limit('a', { cost: 3 })).allowed, 'a has its whole capacity again').toBe(
          true,
        );
        const keys = await run.liveKeys();
        if (keys !== undefined) {
          const expected = ['a', 'b'].flatMap((id) => policies.map((x) => run.key(id, x)));
          h.expect(keys, 'keys after reset').toEqual(expected.sort());
        }
      });

      if (h.inspect !== undefined) {
        h.test('every key written carries a TTL equal to its resetAfterMs', async (run) => {
          const policies = [
            fixedWindow({ limit: 7, window: '1h' }),
            slidingWindowLog({ limit: 9, window: '10m' }),
            tokenBucket({ limit: 5, interval: '1m', burst: 8 }),
            leakyBucket({ limit: 3, interval: '1s', queue: 6 }),
            slidingWindow({ limit: 6, window: '30s' }),
          ];
          for (const policy of policies) {
            const l = run.limiter(policy);
            for (const cost of [1, 2, 1]) {
              const d = await l.limit('solo', { cost });
              h.expect(d.allowed, `${policy.id}: cost ${cost}`).toBe(true);
              await expectTtls(h, run, l, 'solo', d);
            }
          }
          const all = run.limiter(policies);
          for (const cost of [1, 1, 2]) {
            const d = await all.limit('multi', { cost });
            h.expect(d.allowed, `all policies: cost ${cost}`).toBe(true);
            await expectTtls(h, run, all, 'multi', d);
          }
          const keys = await run.liveKeys();
          if (keys !== undefined) {
            const expected = ['solo', 'multi'].flatMap((id) => policies.map((p) => run.key(id, p)));
            h.expect(keys, 'no other key written').toEqual(expected.sort());
            for (const k of keys) {
              const ttl = await run.ttl(k);
              h.expect(
                typeof ttl === 'number' && ttl > 0 && Number.isFinite(ttl),
                `${k} expires`,
              ).toBe(true);
            }
          }
        });
      }
    },
  );
}
