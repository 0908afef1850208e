import {
  createLimiter,
  type Decision,
  isFloodgateError,
  type Limiter,
  leakyBucket,
  type Policy,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import type { Harness, Run } from './harness.js';

// Shadow mode and `limiter.wait()` on every store. Shadowing maps the store's answer, so the
// state must evolve exactly as when enforcing; waiting retries through the store, so it must
// work on every store's clock. Policies without window seams (buckets, the exact log) keep the
// checks exact on stores that run on the real clock too.

function shadowLimiter(run: Run, policy: Policy | readonly Policy[], prefix: string): Limiter {
  return createLimiter({
    store: run.spy,
    policy,
    prefix,
    blockCache: false,
    onStoreError: 'throw',
    shadow: true,
  });
}

async function code(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
  } catch (e) {
    return isFloodgateError(e) ? e.code : String(e);
  }
  return undefined;
}

/**
 * While `body` runs, the suite's clock moves 5 ms per real ms on stores it controls (a waiter's
 * timer runs on real time), and is left alone on stores that read their own clock.
 */
async function ticking<T>(h: Harness, run: Run, body: () => Promise<T>): Promise<T> {
  if (!h.controlsTime) return body();
  const timer = setInterval(() => run.advance(50), 10);
  try {
    return await body();
  } finally {
    clearInterval(timer);
  }
}

export function registerControls(h: Harness): void {
  h.api.describe('shadow mode: denials reported, the store charged as when enforcing', () => {
    h.test('a shadow limiter and an enforcing one leave the same state', async (run) => {
      const policies = [
        tokenBucket({ limit: 3, interval: '1h', name: 'bucket' }),
        slidingWindowLog({ limit: 2, window: '1h', name: 'log' }),
      ];
      const shadow = shadowLimiter(run, policies, `${run.prefix}s`);
      const enforce = run.limiter(policies, `${run.prefix}e`);
      for (let i = 0; i < 5; i++) {
        const s = await shadow.limit('k');
        const e = await enforce.limit('k');
        h.expect(s.allowed, `call ${i}: shadow admits`).toBe(true);
        h.expect(s.remaining, `call ${i}: remaining`).toBe(e.remaining);
        h.expect(s.shadowDenied === true, `call ${i}: shadowDenied iff enforced denies`).toBe(
          !e.allowed,
        );
        if (!e.allowed) {
          h.expect(s.retryAfterMs, `call ${i}: the would-be wait`).toBeGreaterThanOrEqual(1);
          h.expect(s.binding.name, `call ${i}: the would-be binding`).toBe(e.binding.name);
        }
      }
      const ps = await shadow.peek('k');
      const pe = await enforce.peek('k');
      h.expect(
        ps.policies.map((p) => p.remaining),
        'the same units left: would-be denials charged nothing',
      ).toEqual(pe.policies.map((p) => p.remaining));
      h.expect(
        ps.policies.map((p) => p.remaining),
        'two admissions charged',
      ).toEqual([1, 0]);
    });

    h.test(
      'per policy: a shadowed denial admits and charges the enforced policies alone',
      async (run) => {
        const trial = tokenBucket({ limit: 1, interval: '1h', name: 'trial', shadow: true });
        const hard = tokenBucket({ limit: 2, interval: '1h', name: 'hard' });
        const l = run.limiter([trial, hard]);
        h.expect((await l.limit('k')).allowed, 'first').toBe(true);
        const second = await l.limit('k');
        h.expect([second.allowed, second.shadowDenied], 'second: shadow-denied').toEqual([
          true,
          true,
        ]);
        h.expect(second.binding.name, 'the enforced policy binds').toBe('hard');
        h.expect(second.remaining, 'what the client is shown: the enforced count').toBe(0);
        h.expect(
          second.policies.map((p) => p.name),
          'enforced policies only',
        ).toEqual(['hard']);
        const peeked = await l.peek('k');
        h.expect(
          [peeked.shadowed?.[0]?.remaining, peeked.policies[0]?.remaining],
          'the enforced policy charged as if alone, the shadowed one not past its limit',
        ).toEqual([0, 0]);
        h.expect((await l.limit('k')).allowed, 'the enforced limit holds').toBe(false);
        // The enforced copy of the shadowed policy shares its state (same id): it denies.
        const enforced = run.limiter(tokenBucket({ limit: 1, interval: '1h', name: 'trial' }));
        const d = await enforced.limit('k');
        h.expect([d.allowed, d.shadowDenied], 'the enforced copy denies').toEqual([
          false,
          undefined,
        ]);
      },
    );

    h.test('a refund gives back only what the admission charged', async (run) => {
      // A shadow limiter and an enforcing one share the state: a would-be denial the shadow one
      // charged nothing for must give nothing back, or the enforcing one admits over its limit.
      const policy = tokenBucket({ limit: 2, interval: '1h', name: 'p' });
      const shadow = shadowLimiter(run, policy, run.prefix);
      const enforce = run.limiter(policy);
      await enforce.limit('k', { cost: 2 });
      for (let i = 0; i < 3; i++) {
        const d = await shadow.limit('k');
        h.expect(d.shadowDenied, `shadow call ${i}: would deny`).toBe(true);
        await shadow.refund('k', { cost: 1, decision: d });
      }
      h.expect((await enforce.limit('k')).allowed, 'nothing given back').toBe(false);
      // Beside enforced policies: the enforced ones were charged and get their unit back.
      const trial = tokenBucket({ limit: 1, interval: '1h', name: 'trial', shadow: true });
      const hard = tokenBucket({ limit: 3, interval: '1h', name: 'hard' });
      const mixed = run.limiter([trial, hard], `${run.prefix}x`);
      await mixed.limit('k');
      const d = await mixed.limit('k');
      h.expect(d.shadowDenied, 'trial would deny').toBe(true);
      await mixed.refund('k', { cost: 1, decision: d });
      const p = await mixed.peek('k');
      h.expect(
        [p.shadowed?.[0]?.remaining, p.policies[0]?.remaining],
        'hard got its unit back; trial, never charged for it, got nothing',
      ).toEqual([0, 2]);
    });
  });

  h.api.describe('wait(): a turn, first in first out, one store call per turn', () => {
    h.test(
      'resolves admitted once the policy admits, after a leaky bucket’s delay',
      async (run) => {
        const l = run.limiter(tokenBucket({ limit: 1, interval: '300ms' }));
        await l.limit('k');
        const d = await ticking(h, run, () => l.wait('k', { maxWaitMs: 60_000 }));
        h.expect(d.allowed, 'admitted').toBe(true);
        const shaped = run.limiter(leakyBucket({ limit: 1, interval: '200ms', queue: 3 }));
        await shaped.limit('k');
        const started = performance.now();
        const s = await shaped.wait('k', { maxWaitMs: 60_000 });
        h.expect(s.allowed, 'admitted with a turn').toBe(true);
        h.expect(s.delayMs, 'a turn later').toBeGreaterThanOrEqual(1);
        if (!h.controlsTime) {
          h.expect(performance.now() - started, 'slept its delay').toBeGreaterThanOrEqual(
            s.delayMs - 2,
          );
        }
      },
    );

    h.test('serves waiters of one identity in order', async (run) => {
      const l = run.limiter(tokenBucket({ limit: 1, interval: '150ms' }));
      await l.limit('k');
      const order: number[] = [];
      const all = ticking(h, run, () =>
        Promise.all(
          [0, 1, 2].map((i) =>
            l.wait('k', { maxWaitMs: 60_000 }).then((d: Decision) => {
              h.expect(d.allowed, `waiter ${i}`).toBe(true);
              order.push(i);
            }),
          ),
        ),
      );
      await all;
      h.expect(order, 'first in, first out').toEqual([0, 1, 2]);
    });

    h.test(
      'rejects at once with WAIT_TIMEOUT, every waiter told by one store call',
      async (run) => {
        const l = run.limiter(tokenBucket({ limit: 1, interval: '1h' }));
        await l.limit('k');
        const before = run.calls.evaluate;
        const codes = await Promise.all(
          [500, 1_000, 2_000].map((maxWaitMs) => code(l.wait('k', { maxWaitMs }))),
        );
        h.expect(codes, 'all time out').toEqual(['WAIT_TIMEOUT', 'WAIT_TIMEOUT', 'WAIT_TIMEOUT']);
        h.expect(run.calls.evaluate - before, 'one store call for all three').toBe(1);
      },
    );

    h.test('an aborted wait rejects with ABORTED and charges nothing', async (run) => {
      const l = run.limiter(tokenBucket({ limit: 2, interval: '1h' }));
      const gone = new AbortController();
      gone.abort();
      h.expect(
        await code(l.wait('k', { maxWaitMs: 1_000, signal: gone.signal })),
        'pre-aborted',
      ).toBe('ABORTED');
      h.expect(run.calls.evaluate, 'no store call').toBe(0);
      await l.limit('k', { cost: 2 });
      const later = new AbortController();
      const waiting = l.wait('k', { maxWaitMs: 7_200_000, signal: later.signal });
      setTimeout(() => later.abort(), 20);
      h.expect(await code(waiting), 'aborted while waiting').toBe('ABORTED');
      h.expect((await l.peek('k')).remaining, 'nothing more charged').toBe(0);
      h.expect((await l.limit('k')).allowed, 'still denied: the state is as it was').toBe(false);
    });

    h.test('in shadow mode, resolves at once with the shadow denial', async (run) => {
      const l = shadowLimiter(run, tokenBucket({ limit: 1, interval: '1h' }), `${run.prefix}s`);
      await l.limit('k');
      const d = await l.wait('k', { maxWaitMs: 0 });
      h.expect([d.allowed, d.shadowDenied], 'shadow-denied').toEqual([true, true]);
    });
  });
}
