// Where overrides live and what they cost (registered by overrides.ts): one store call per
// decision with or without them, the key beside the counts with its TTL, bad input refused before
// the store is touched.
import {
  createLimiter,
  type FloodgateErrorCode,
  fixedWindow,
  type LimiterWithOverrides,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { encodeIdentity, overrideKey, policyKey, type Store } from '@floodgate/core/store';
import { expectCode, type Harness } from './harness.js';
import { counted, HOUR, nearOf, setup } from './overrides-setup.js';

export function registerOverrideStoreTests(h: Harness): void {
  const near = nearOf(h);
  h.test('one store call per decision, with or without overrides', async (run) => {
    const policies = [
      tokenBucket({ limit: 9, interval: '1d', name: 'tb' }),
      fixedWindow({ limit: 9, window: '1d', name: 'fw' }),
    ];
    const plain = counted(run.store);
    const without = createLimiter({
      store: plain.spy,
      policy: policies,
      prefix: run.prefix,
      blockCache: false,
      onStoreError: 'throw',
    });
    const { limiter, calls, now } = setup(run, policies, `${run.prefix}o`);
    for (let i = 0; i < 3; i++) {
      await without.limit('c');
      await limiter.limit('c');
    }
    await without.peek('c');
    await limiter.peek('c');
    h.expect(plain.calls, 'without').toEqual({ evaluate: 4, write: 0, read: 0, reset: 0 });
    h.expect(calls, 'with, none stored').toEqual({ evaluate: 4, write: 0, read: 0, reset: 0 });
    await limiter.override('c', { limit: { tb: 20 }, until: now() + HOUR });
    for (let i = 0; i < 3; i++) await limiter.limit('c');
    await limiter.overrides.get('c');
    await limiter.overrides.clear('c');
    h.expect(calls, 'with one stored').toEqual({ evaluate: 7, write: 2, read: 1, reset: 0 });
  });

  h.test(
    "stored beside the counts: the identity's tag, a TTL to until; reset keeps it",
    async (run) => {
      const policy = fixedWindow({ limit: 1, window: '1d' });
      const { limiter, now } = setup(run, policy);
      const until = now() + HOUR;
      await limiter.override('t{1}', { limit: 2, until });
      const key = overrideKey(policyKey(run.prefix, encodeIdentity('t{1}'), policy.id));
      if (h.inspect !== undefined) {
        const left = until - now();
        const ttl = await run.ttl(key);
        h.expect(typeof ttl, 'the override key exists').toBe('number');
        near(ttl!, left, 'its TTL runs to until', h.inspect.ttlSlackMs ?? 0);
      }
      await limiter.limit('t{1}');
      await limiter.reset('t{1}');
      const d = await limiter.limit('t{1}');
      h.expect([d.limit, d.remaining], 'reset forgot the count, not the override').toEqual([2, 1]);
      await limiter.overrides.clear('t{1}');
      h.expect(await run.ttl(key), 'clear deletes the key').toBe(undefined);
    },
  );

  h.test('bad input is refused before the store is touched', async (run) => {
    const one = setup(run, fixedWindow({ limit: 5, window: '1d', name: 'w' }));
    const two = setup(run, [
      fixedWindow({ limit: 5, window: '1d', name: 'w' }),
      slidingWindowLog({ limit: 5, window: '1h', name: 'log' }),
    ]);
    const now = one.now();
    const cases: [string, FloodgateErrorCode, (l: LimiterWithOverrides) => Promise<unknown>][] = [
      ['limit -1', 'INVALID_OVERRIDE', (l) => l.override('k', { limit: -1, until: now + HOUR })],
      ['limit 1.5', 'INVALID_OVERRIDE', (l) => l.override('k', { limit: 1.5, until: now + HOUR })],
      [
        'limit "5"',
        'INVALID_OVERRIDE',
        (l) => l.override('k', { limit: '5' as never, until: now + HOUR }),
      ],
      [
        'limit NaN',
        'INVALID_OVERRIDE',
        (l) => l.override('k', { limit: Number.NaN, until: now + HOUR }),
      ],
      ['limit {}', 'INVALID_OVERRIDE', (l) => l.override('k', { limit: {}, until: now + HOUR })],
      [
        'unknown name',
        'INVALID_OVERRIDE',
        (l) => l.override('k', { limit: { nope: 3 }, until: now + HOUR }),
      ],
      ['until past', 'INVALID_OVERRIDE', (l) => l.override('k', { limit: 3, until: now - 1 })],
      ['until now', 'INVALID_OVERRIDE', (l) => l.override('k', { limit: 3, until: now })],
      [
        'until string',
        'INVALID_OVERRIDE',
        (l) => l.override('k', { limit: 3, until: '2030-01-01' as never }),
      ],
      [
        'until 367 days',
        'INVALID_OVERRIDE',
        (l) => l.override('k', { limit: 3, until: now + 367 * 24 * HOUR }),
      ],
      ['no until', 'INVALID_OVERRIDE', (l) => l.override('k', { limit: 3 } as never)],
      [
        'unknown option',
        'INVALID_OVERRIDE',
        (l) => l.override('k', { limit: 3, until: now + HOUR, for: '1h' } as never),
      ],
      ['no options', 'INVALID_OVERRIDE', (l) => l.override('k', undefined as never)],
      ['empty identity', 'INVALID_KEY', (l) => l.override('', { limit: 3, until: now + HOUR })],
      ['get, empty identity', 'INVALID_KEY', (l) => l.overrides.get('')],
      ['clear, empty identity', 'INVALID_KEY', (l) => l.overrides.clear('')],
    ];
    for (const [what, code, fn] of cases) await expectCode(h, what, code, () => fn(one.limiter));
    await expectCode(h, 'a number for two policies', 'INVALID_OVERRIDE', () =>
      two.limiter.override('k', { limit: 3, until: now + HOUR }),
    );
    await expectCode(h, 'a log past MAX_LOG_LIMIT', 'INVALID_OVERRIDE', () =>
      two.limiter.override('k', { limit: { log: 10_001 }, until: now + HOUR }),
    );
    await expectCode(h, 'overrides: "yes"', 'INVALID_OPTION', () =>
      createLimiter({
        store: run.store,
        policy: fixedWindow({ limit: 1, window: '1d' }),
        overrides: 'yes' as never,
      }),
    );
    const bare: Store = {
      evaluate: (c) => run.store.evaluate(c),
      reset: (k) => run.store.reset(k),
    };
    await expectCode(h, 'a store without overrides', 'INVALID_OPTION', () =>
      createLimiter({
        store: bare,
        policy: fixedWindow({ limit: 1, window: '1d' }),
        overrides: true,
      }),
    );
    for (const c of [one.calls, two.calls]) {
      h.expect(c, 'no store call').toEqual({ evaluate: 0, write: 0, read: 0, reset: 0 });
    }
    const keys = await run.liveKeys();
    if (keys !== undefined) h.expect(keys, 'nothing written').toEqual([]);
  });
}
