import {
  createLimiter,
  fixedWindow,
  leakyBucket,
  type Policy,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';
import { expectAbsent, expectCode, expectUntouched, type Harness } from './harness.js';

const BAD_IDENTITIES: readonly unknown[] = [
  '',
  undefined,
  null,
  0,
  42,
  true,
  {},
  [],
  ['a'],
  Symbol('a'),
  () => 'a',
];
const BAD_COSTS: readonly unknown[] = [
  0,
  -1,
  -0.5,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  Number.NEGATIVE_INFINITY,
  Number.MAX_SAFE_INTEGER + 1,
  2 ** 60,
  '1',
  true,
  {},
  1n,
];
const BAD_COUNTS: readonly unknown[] = [
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '5',
  null,
  undefined,
  2 ** 53,
];
const BAD_DURATIONS: readonly unknown[] = [
  0,
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  'abc',
  '-1m',
  '+1m',
  '',
  '1x',
  '0s',
  '1.5ms',
  '1e3ms',
  'm',
  null,
  undefined,
  {},
];
const BAD_NAMES: readonly unknown[] = ['', 'x'.repeat(65), 'é', 'a\nb', 5];

type Factory = (options: never) => Policy;
interface FactoryCase {
  name: string;
  factory: Factory;
  good: Record<string, unknown>;
  /** Each numeric or duration field and what is bad for it. */
  fields: Record<string, readonly unknown[]>;
  /** Options that belong to other factories: a typo must not pass silently. */
  foreign: readonly string[];
}

const FACTORIES: readonly FactoryCase[] = [
  ...(
    [
      ['fixedWindow', fixedWindow],
      ['slidingWindow', slidingWindow],
      ['slidingWindowLog', slidingWindowLog],
    ] as const
  ).map(([name, factory]) => ({
    name,
    factory: factory as Factory,
    good: { limit: 5, window: '1s' },
    fields: { limit: BAD_COUNTS, window: BAD_DURATIONS },
    foreign: ['interval', 'burst', 'queue', 'windowMs', 'foo'],
  })),
  {
    name: 'tokenBucket',
    factory: tokenBucket as Factory,
    good: { limit: 5, interval: '1s', burst: 10 },
    fields: {
      limit: BAD_COUNTS,
      interval: BAD_DURATIONS,
      burst: BAD_COUNTS.filter((v) => v !== undefined),
    },
    foreign: ['window', 'queue', 'foo'],
  },
  {
    name: 'leakyBucket',
    factory: leakyBucket as Factory,
    good: { limit: 5, interval: '1s', queue: 3 },
    fields: { limit: BAD_COUNTS, interval: BAD_DURATIONS, queue: BAD_COUNTS },
    foreign: ['window', 'burst', 'foo'],
  },
];

function show(v: unknown): string {
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'symbol' || typeof v === 'function') return String(v);
  return v === undefined ? 'undefined' : Number.isNaN(v) ? 'NaN' : JSON.stringify(v);
}

export function registerValidation(h: Harness): void {
  h.api.describe('bad input is rejected before the store is touched', () => {
    h.test('identities that are empty or not strings: INVALID_KEY', async (run) => {
      const limiter = run.limiter([
        tokenBucket({ limit: 5, interval: '1d' }),
        fixedWindow({ limit: 5, window: '1d' }),
      ]);
      for (const id of BAD_IDENTITIES) {
        await expectCode(h, `limit(${show(id)})`, 'INVALID_KEY', () => limiter.limit(id as string));
        await expectCode(h, `limit(${show(id)}, { cost: 2 })`, 'INVALID_KEY', () =>
          limiter.limit(id as string, { cost: 2 }),
        );
        await expectCode(h, `peek(${show(id)})`, 'INVALID_KEY', () => limiter.peek(id as string));
        await expectCode(h, `reset(${show(id)})`, 'INVALID_KEY', () => limiter.reset(id as string));
      }
      await expectUntouched(h, run, 'after bad identities');
    });

    h.test(
      'costs that are not positive safe integers: INVALID_COST, nothing charged',
      async (run) => {
        const policies = [
          fixedWindow({ limit: 5, window: '1d' }),
          slidingWindow({ limit: 5, window: '1d' }),
          slidingWindowLog({ limit: 5, window: '1d' }),
          tokenBucket({ limit: 5, interval: '1d' }),
          leakyBucket({ limit: 5, interval: '1d', queue: 4 }),
        ];
        const limiter = run.limiter(policies);
        for (const cost of BAD_COSTS) {
          await expectCode(h, `cost ${show(cost)}`, 'INVALID_COST', () =>
            limiter.limit('victim', { cost: cost as number }),
          );
        }
        for (const opts of [5, '2', null, { costs: 2 }, { cost: 1, weight: 2 }]) {
          await expectCode(h, `limit options ${show(opts)}`, 'INVALID_OPTION', () =>
            limiter.limit('victim', opts as never),
          );
        }
        await expectUntouched(h, run, 'after bad costs');
        await expectAbsent(h, run, ['victim'], policies);
        const peek = await limiter.peek('victim');
        h.expect(peek.remaining, 'victim untouched: remaining').toBe(5);
        h.expect(
          peek.policies.map((p) => p.remaining),
          'victim untouched: per policy',
        ).toEqual([5, 5, 5, 5, 5]);
      },
    );

    h.test('a cost above what a policy can ever admit: COST_EXCEEDS_CAPACITY', async (run) => {
      const cases: [Policy[], number][] = [
        [[fixedWindow({ limit: 3, window: '1d' })], 3],
        [[slidingWindow({ limit: 3, window: '1d' })], 3],
        [[slidingWindowLog({ limit: 3, window: '1d' })], 3],
        [[tokenBucket({ limit: 4, interval: '1d' })], 4],
        [[tokenBucket({ limit: 2, interval: '1d', burst: 5 })], 5],
        [[leakyBucket({ limit: 2, interval: '1d', queue: 3 })], 4],
        [
          [
            fixedWindow({ limit: 10, window: '1d' }),
            tokenBucket({ limit: 1, interval: '1d', burst: 2 }),
          ],
          2,
        ],
      ];
      for (const [policies, capacity] of cases) {
        const what = policies.map((p) => p.id).join('+');
        const limiter = run.limiter(policies);
        for (const cost of [capacity + 1, capacity * 2, Number.MAX_SAFE_INTEGER]) {
          await expectCode(h, `${what}: cost ${cost}`, 'COST_EXCEEDS_CAPACITY', () =>
            limiter.limit('victim', { cost }),
          );
        }
      }
      await expectUntouched(h, run, 'after costs above capacity');
      // An identity per case: policies of one kind and window share a key whatever their limits.
      for (const [i, [policies, capacity]] of cases.entries()) {
        const what = policies.map((p) => p.id).join('+');
        const d = await run.limiter(policies).limit(`fresh-${i}`, { cost: capacity });
        h.expect(d.allowed, `${what}: cost = capacity ${capacity} on an empty key`).toBe(true);
        h.expect(d.remaining, `${what}: remaining after the full capacity`).toBe(0);
      }
    });

    h.test(
      'policy factories refuse bad parameters and unknown options: INVALID_POLICY',
      async (run) => {
        for (const c of FACTORIES) {
          h.expect(c.factory(c.good as never).kind, `${c.name} accepts ${show(c.good)}`).toBe(
            c.name,
          );
          for (const [field, bads] of Object.entries(c.fields)) {
            for (const bad of bads) {
              const o = { ...c.good, [field]: bad };
              await expectCode(h, `${c.name}(${field}: ${show(bad)})`, 'INVALID_POLICY', () =>
                c.factory(o as never),
              );
            }
          }
          for (const extra of c.foreign) {
            const o = { ...c.good, [extra]: 1 };
            await expectCode(h, `${c.name} with unknown option ${extra}`, 'INVALID_POLICY', () =>
              c.factory(o as never),
            );
          }
          for (const name of BAD_NAMES) {
            const o = { ...c.good, name };
            await expectCode(h, `${c.name}(name: ${show(name)})`, 'INVALID_POLICY', () =>
              c.factory(o as never),
            );
          }
          for (const o of [undefined, null, 5, 'x']) {
            await expectCode(h, `${c.name}(${show(o)})`, 'INVALID_POLICY', () =>
              c.factory(o as never),
            );
          }
        }
        await expectCode(h, 'fixedWindow too large to count exactly', 'INVALID_POLICY', () =>
          fixedWindow({ limit: 2 ** 40, window: 2 ** 20 }),
        );
        await expectUntouched(h, run, 'after bad policies');
      },
    );

    h.test(
      'createLimiter refuses bad policies (INVALID_POLICY) and options (INVALID_OPTION)',
      async (run) => {
        const policy = fixedWindow({ limit: 5, window: '1d' });
        const store = run.spy;
        const badPolicies: unknown[] = [
          [],
          {},
          undefined,
          null,
          'fixedWindow',
          [policy, policy],
          // One kind over one window is one count, whatever the limits: a duplicate.
          [policy, fixedWindow({ limit: 50, window: 86_400_000 })],
          [{ ...policy, params: 'x' }],
        ];
        for (const bad of badPolicies) {
          await expectCode(h, `policy ${show(bad)}`, 'INVALID_POLICY', () =>
            createLimiter({ store, policy: bad as Policy }),
          );
        }
        const badOptions: Record<string, unknown>[] = [
          { store, policy, foo: 1 },
          { store, policy, clock: 'server' },
          { store, policy, prefix: 'a{b' },
          { store, policy, prefix: 'a}' },
          { store, policy, prefix: 5 },
          { store, policy, timeoutMs: 0 },
          { store, policy, timeoutMs: -1 },
          { store, policy, timeoutMs: 1.5 },
          { store: {}, policy },
          { policy },
          { store, policy, onStoreError: 'alow' },
          { store, policy, onStoreError: {} },
          { store, policy, blockCache: 'yes' },
          { store, policy, blockCache: { max: 0 } },
          { store, policy, blockCache: { max: 1.5 } },
          { store, policy, onError: 'log' },
        ];
        for (const bad of badOptions) {
          const { store: _s, policy: _p, ...rest } = bad;
          await expectCode(
            h,
            `options ${Object.keys(bad).join(',')} ${show(rest)}`,
            'INVALID_OPTION',
            () => createLimiter(bad as never),
          );
        }
        await expectUntouched(h, run, 'after bad limiter options');
      },
    );
  });
}
