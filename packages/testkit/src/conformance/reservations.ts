import { fixedWindow, tokenBucket } from '@floodgate/core';
import { expectCode, type Harness } from './harness.js';
import { perDayOfEveryKind } from './policies.js';

/** Every kind with limit 10 per day, named `x`: real time adds nothing back during a test. */
const TEN_PER_DAY = perDayOfEveryKind(10, 'x');

/** A second policy beside `x`, with room to spare. */
const OTHER = fixedWindow({ limit: 100, window: '1d', name: 'other' });

const remainingOf = (d: { policies: readonly { name: string; remaining: number }[] }) =>
  Object.fromEntries(d.policies.map((p) => [p.name, p.remaining]));

/** Cost records, reservations and their settling: what every store must do the same. */
export function registerReservations(h: Harness): void {
  h.api.describe('per-policy costs and reservations', () => {
    h.test('a cost record charges each policy its own units, in one store call', async (run) => {
      const requests = fixedWindow({ limit: 10, window: '1d', name: 'requests' });
      const tokens = tokenBucket({ limit: 1000, interval: '1d', name: 'tokens' });
      const l = run.limiter([requests, tokens]);
      const before = run.calls.evaluate;
      const d = await l.limit('k', { cost: { requests: 1, tokens: 300 } });
      h.expect(run.calls.evaluate - before, 'store calls').toBe(1);
      h.expect([d.allowed, remainingOf(d)]).toEqual([true, { requests: 9, tokens: 700 }]);
      const denied = await l.limit('k', { cost: { requests: 1, tokens: 701 } });
      h.expect([denied.allowed, denied.binding.name], 'tokens deny').toEqual([false, 'tokens']);
      // Nothing of a denial is charged: requests too kept its 9.
      h.expect(remainingOf(await l.peek('k'))).toEqual({ requests: 9, tokens: 700 });
    });

    h.test(
      'settled above its estimate, a policy is in debt: denied even at a cost of 0 to it',
      async (run) => {
        for (const policy of TEN_PER_DAY) {
          const l = run.limiter([policy, OTHER]);
          const id = `debt-${policy.kind}`;
          const r = await l.reserve(id, { cost: { x: 4, other: 1 } });
          h.expect([r.allowed, remainingOf(r)], `${policy.kind}: reserved`).toEqual([
            true,
            { x: 6, other: 99 },
          ]);
          await r.settle({ x: 15, other: 1 });
          const d = await l.limit(id, { cost: { other: 1 } });
          h.expect([d.allowed, d.binding.name], `${policy.kind}: x in debt denies`).toEqual([
            false,
            'x',
          ]);
          h.expect(d.retryAfterMs > 0, `${policy.kind}: says when (${d.retryAfterMs})`).toBe(true);
          h.expect(remainingOf(await l.peek(id)), `${policy.kind}: other not charged`).toEqual({
            x: 0,
            other: 99,
          });
        }
      },
    );

    h.test('a bucket in debt says exactly when: the debt and the cost paid back', async (run) => {
      // 10 a day: one unit per 8 640 000 ms. 15 units charged: 5 past full, and 1 more to admit.
      const l = run.limiter(tokenBucket({ limit: 10, interval: '1d', name: 'x' }));
      const r = await l.reserve('b', { cost: 2 });
      await r.settle(15);
      const d = await l.limit('b');
      h.expect(d.allowed).toBe(false);
      // On a server clock the calls are a few ms apart: the wait is that much shorter.
      const slack = h.controlsTime ? 0 : 1_000;
      h.expect(d.retryAfterMs, 'retryAfterMs').toBeLessThanOrEqual(6 * 8_640_000);
      h.expect(d.retryAfterMs, 'retryAfterMs').toBeGreaterThanOrEqual(6 * 8_640_000 - slack);
    });

    h.test(
      'settled below its estimate gives the difference back; cancel gives it all',
      async (run) => {
        for (const policy of TEN_PER_DAY) {
          const l = run.limiter(policy);
          const id = `back-${policy.kind}`;
          const r = await l.reserve(id, { cost: 8 });
          await r.settle(3);
          h.expect((await l.peek(id)).remaining, `${policy.kind}: settled at 3`).toBe(7);
          const c = await l.reserve(id, { cost: 4 });
          h.expect(c.remaining, `${policy.kind}: reserved 4 more`).toBe(3);
          await c.cancel();
          h.expect((await l.peek(id)).remaining, `${policy.kind}: cancelled`).toBe(7);
        }
      },
    );

    h.test(
      'settle and cancel are taken once; a denial does not settle; bad input changes nothing',
      async (run) => {
        const l = run.limiter(fixedWindow({ limit: 10, window: '1d', name: 'x' }));
        const r = await l.reserve('o', { cost: 5 });
        await expectCode(h, 'settle naming no policy', 'INVALID_COST', () => r.settle({ y: 1 }));
        await expectCode(h, 'settle below 0', 'INVALID_COST', () => r.settle(-1));
        await r.settle(6);
        await expectCode(h, 'settled twice', 'ALREADY_SETTLED', () => r.settle(6));
        await expectCode(h, 'cancel after settle', 'ALREADY_SETTLED', () => r.cancel());
        h.expect((await l.peek('o')).remaining, 'charged once, at 6').toBe(4);
        const denied = await l.reserve('o', { cost: 5 });
        h.expect(denied.allowed).toBe(false);
        await expectCode(h, 'settle a denial', 'RESERVATION_DENIED', () => denied.settle(1));
        await expectCode(h, 'cancel a denial', 'RESERVATION_DENIED', () => denied.cancel());
        const late = await l.reserve('o', { cost: 2, settleWithinMs: 1 });
        await new Promise((resolve) => setTimeout(resolve, 20));
        await expectCode(h, 'settled too late', 'RESERVATION_EXPIRED', () => late.settle(0));
        h.expect((await l.peek('o')).remaining, 'the estimate stands').toBe(2);
      },
    );

    h.test('bad costs are refused before the store is touched', async (run) => {
      const l = run.limiter([fixedWindow({ limit: 10, window: '1d', name: 'x' }), OTHER]);
      const before = run.calls.evaluate;
      const bad: [string, unknown, 'INVALID_COST' | 'COST_EXCEEDS_CAPACITY'][] = [
        ['a name of no policy', { y: 1 }, 'INVALID_COST'],
        ['a negative unit', { x: -1 }, 'INVALID_COST'],
        ['a fraction', { x: 1.5 }, 'INVALID_COST'],
        ['nothing charged', { x: 0 }, 'INVALID_COST'],
        ['not a number', { x: '1' }, 'INVALID_COST'],
        ['past a capacity', { x: 11, other: 1 }, 'COST_EXCEEDS_CAPACITY'],
      ];
      for (const [what, cost, code] of bad) {
        await expectCode(h, `limit: ${what}`, code, () => l.limit('v', { cost: cost as never }));
        await expectCode(h, `reserve: ${what}`, code, () =>
          l.reserve('v', { cost: cost as never }),
        );
      }
      await expectCode(h, 'settleWithinMs 0', 'INVALID_OPTION', () =>
        l.reserve('v', { settleWithinMs: 0 }),
      );
      await expectCode(h, 'an unknown option', 'INVALID_OPTION', () =>
        l.reserve('v', { costs: 1 } as never),
      );
      h.expect(run.calls.evaluate - before, 'store calls').toBe(0);
    });
  });
}

/** A settle after the window of its reservation ended (the suite's clock moves). */
export function registerLateSettles(h: Harness): void {
  h.test(
    'a settle after its window ended charges the new window and gives back nothing',
    async (run) => {
      run.at(0);
      const l = run.limiter(fixedWindow({ limit: 10, window: '1m', name: 'x' }));
      const up = await l.reserve('w', { cost: 6 });
      const down = await l.reserve('w', { cost: 3 });
      h.expect(down.remaining, 'both reserved in the first window').toBe(1);
      run.advance(60_000);
      await up.settle(9);
      h.expect((await l.peek('w')).remaining, 'the difference, in the new window').toBe(7);
      await down.settle(0);
      h.expect((await l.peek('w')).remaining, 'the old window forgot the 3').toBe(7);
    },
  );
}
