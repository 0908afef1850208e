import {
  fixedWindow,
  type Limiter,
  type Policy,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { POLICY_TABLE } from '@floodgate/core/internal';
import fc from 'fast-check';
import { costArb, fitCost, policiesArb, stepArb } from './arbitraries.js';
import { expectCode, type Harness } from './harness.js';
import { perDayOfEveryKind } from './policies.js';

/** Every kind with limit 10 and a window long enough that real time adds nothing back. */
const TEN_PER_DAY = perDayOfEveryKind(10);

/**
 * Whether a refund at `now` of a charge made at `at` is one the guarantee covers
 * (docs/algorithms.md, Refunds): in the charge's window (period) for the window counters and quota, within the
 * window for the log, and for buckets with no other admission of the identity in between.
 */
function covered(policies: readonly Policy[], at: number, now: number, others: number): boolean {
  return policies.every((p) => {
    const w = p.windowMs;
    if (p.kind === 'fixedWindow' || p.kind === 'slidingWindow') {
      return Math.floor(at / w) === Math.floor(now / w);
    }
    if (p.kind === 'quota') return periodEnd(p, at) === periodEnd(p, now);
    return p.kind === 'slidingWindowLog' ? now < at + w : others === 0;
  });
}

/** The end of the quota period holding `t` (the second of the ends a call sends). */
function periodEnd(policy: Policy, t: number): string {
  const ends: string[] = [];
  POLICY_TABLE.quota.perCall!.write(policy, t, ends, 0);
  return ends[1]!;
}

/** `limiter.refund`: gives back what an admission charged, atomically, never more. */
export function registerRefund(h: Harness): void {
  h.api.describe('refund: giving back what an admission charged', () => {
    h.test(
      'every kind gives back the units, up to what it counts, never past its limit',
      async (run) => {
        for (const policy of TEN_PER_DAY) {
          const l = run.limiter(policy);
          const charged = await l.limit('x', { cost: 4 });
          h.expect([charged.allowed, charged.remaining], `${policy.kind}: charged 4`).toEqual([
            true,
            6,
          ]);
          await l.refund('x', { cost: 3 });
          h.expect((await l.peek('x')).remaining, `${policy.kind}: 3 given back`).toBe(9);
          // More than it counts: back to the limit, not beyond.
          await l.refund('x', { cost: 10 });
          h.expect((await l.peek('x')).remaining, `${policy.kind}: all given back`).toBe(10);
          h.expect((await l.limit('x', { cost: 10 })).allowed, `${policy.kind}: 10 admitted`).toBe(
            true,
          );
          h.expect((await l.limit('x')).allowed, `${policy.kind}: and not an 11th`).toBe(false);
        }
      },
    );

    h.test('several policies: every one gives back, in one store call', async (run) => {
      const l = run.limiter([TEN_PER_DAY[0]!, TEN_PER_DAY[3]!, TEN_PER_DAY[2]!]);
      await l.limit('m', { cost: 5 });
      const before = run.calls.evaluate;
      await l.refund('m', { cost: 2 });
      h.expect(run.calls.evaluate - before, 'one store call').toBe(1);
      const d = await l.peek('m');
      h.expect(
        d.policies.map((p) => p.remaining),
        'each policy 2 back',
      ).toEqual([7, 7, 7]);
    });

    h.test('bad input is a FloodgateError, before the store is called', async (run) => {
      const l = run.limiter(fixedWindow({ limit: 10, window: '1d' }));
      const before = run.calls.evaluate;
      for (const [what, code, fn] of [
        ['cost 0', 'INVALID_COST', () => l.refund('x', { cost: 0 })],
        ['cost 1.5', 'INVALID_COST', () => l.refund('x', { cost: 1.5 })],
        ['cost null', 'INVALID_COST', () => l.refund('x', { cost: null as unknown as number })],
        ['an unknown option', 'INVALID_OPTION', () => l.refund('x', { costs: 1 } as never)],
        ['cost past capacity', 'COST_EXCEEDS_CAPACITY', () => l.refund('x', { cost: 11 })],
        ['empty identity', 'INVALID_KEY', () => l.refund('', { cost: 1 })],
      ] as const) {
        await expectCode(h, what, code, fn as () => Promise<void>);
      }
      h.expect(run.calls.evaluate, 'the store was not called').toBe(before);
    });

    h.test('a refund of an identity with nothing charged writes nothing', async (run) => {
      const l = run.limiter([TEN_PER_DAY[0]!, TEN_PER_DAY[2]!, TEN_PER_DAY[3]!]);
      await l.refund('fresh', { cost: 5 });
      const keys = await run.liveKeys();
      if (keys !== undefined) h.expect(keys, 'no key').toEqual([]);
      h.expect((await l.peek('fresh')).remaining, 'still the limit').toBe(10);
    });

    h.test('a refund leaves a block (blockFor) as it is', async (run) => {
      const l = run.limiter(fixedWindow({ limit: 1, window: '1m', blockFor: '1h' }));
      await l.limit('b');
      h.expect((await l.limit('b')).allowed, 'denied, blocked').toBe(false);
      await l.refund('b', { cost: 1 });
      const d = await l.limit('b');
      h.expect(d.allowed, 'still blocked').toBe(false);
      h.expect(d.retryAfterMs, 'by the block').toBeGreaterThanOrEqual(3_000_000);
    });
  });

  if (!h.controlsTime) return;
  h.api.describe('refund on the suite clock', () => {
    h.test('window counters give back from the current window only', async (run) => {
      for (const policy of [
        fixedWindow({ limit: 5, window: 1000 }),
        slidingWindow({ limit: 5, window: 1000 }),
      ]) {
        const l = run.limiter(policy);
        const id = policy.kind;
        run.at(0);
        await l.limit(id, { cost: 3 });
        run.at(1000);
        // The count of the window that ended is not touched (the sliding window still weighs it).
        const before = (await l.peek(id)).remaining;
        await l.refund(id, { cost: 3 });
        h.expect((await l.peek(id)).remaining, `${id}: nothing of the last window back`).toBe(
          before,
        );
        await l.limit(id, { cost: 1 });
        await l.refund(id, { cost: 3 });
        h.expect((await l.peek(id)).remaining, `${id}: the current window's unit back`).toBe(
          before,
        );
      }
    });

    h.test('slidingWindowLog gives back the oldest units in the window', async (run) => {
      const l = run.limiter(slidingWindowLog({ limit: 3, window: 1000 }));
      run.at(0);
      await l.limit('g');
      run.at(500);
      await l.limit('g');
      run.at(600);
      await l.refund('g', { cost: 1 });
      // The unit of 0 left: the one of 500 stays until 1500. (Taking the newest would leave the
      // unit of 0, gone at 1000: more room from 1000 on than had the request never come.)
      run.at(1100);
      h.expect((await l.peek('g')).remaining, 'the unit of 500 still counts').toBe(2);
      run.at(1500);
      h.expect((await l.peek('g')).remaining, 'then none').toBe(3);
    });

    h.test('buckets move back by the units, never before now', async (run) => {
      const l = run.limiter(tokenBucket({ limit: 10, interval: 1000 }));
      run.at(0);
      await l.limit('t', { cost: 5 });
      run.at(300);
      h.expect((await l.peek('t')).remaining, '3 refilled').toBe(8);
      await l.refund('t', { cost: 5 });
      h.expect((await l.peek('t')).remaining, 'full, not fuller').toBe(10);
      h.expect((await l.limit('t', { cost: 10 })).allowed, 'the whole burst').toBe(true);
      h.expect((await l.limit('t')).allowed, 'and no more').toBe(false);
    });

    h.test(
      'a refund never leaves more room than had the refunded request never come',
      async (run) => {
        const opArb = fc.record({ dt: stepArb(h.scale), cost: costArb });
        let round = 0;
        const property = fc.asyncProperty(
          policiesArb(undefined, h.scale),
          fc.array(opArb, { maxLength: 5 }),
          opArb,
          fc.array(opArb, { maxLength: 4 }),
          fc.array(stepArb(h.scale), { minLength: 1, maxLength: 3 }),
          async (policies, before, refunded, between, probes) => {
            round++;
            const l: Limiter = run.limiter(policies);
            // A is the identity whose request is refunded; B never made that request.
            const [a, b] = [`a${round}`, `b${round}`];
            for (const op of before) {
              run.advance(op.dt);
              const cost = fitCost(op.cost, policies);
              await l.limit(a, { cost });
              await l.limit(b, { cost });
            }
            run.advance(refunded.dt);
            const cost = fitCost(refunded.cost, policies);
            if (!(await l.limit(a, { cost })).allowed) return;
            const at = run.now;
            let others = 0;
            for (const op of between) {
              run.advance(op.dt);
              const c = fitCost(op.cost, policies);
              if (!(await l.limit(a, { cost: c })).allowed) continue;
              others++;
              h.expect(
                (await l.limit(b, { cost: c })).allowed,
                'B, with more room, admits too',
              ).toBe(true);
            }
            if (!covered(policies, at, run.now, others)) return;
            await l.refund(a, { cost });
            for (const dt of [0, ...probes]) {
              run.advance(dt);
              const [da, db] = [await l.peek(a), await l.peek(b)];
              for (let i = 0; i < policies.length; i++) {
                h.expect(
                  da.policies[i]!.remaining,
                  `${policies[i]!.kind}${JSON.stringify(policies[i]!.params)}: room after the refund`,
                ).toBeLessThanOrEqual(db.policies[i]!.remaining);
              }
            }
          },
        );
        await fc.assert(property, { numRuns: h.numRuns });
      },
    );
  });
}
