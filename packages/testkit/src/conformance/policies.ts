import {
  fixedWindow,
  leakyBucket,
  type Policy,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '@floodgate/core';

/**
 * One policy of each kind with capacity 3 and a day-long window, so tests that need no time
 * travel hold on a store with its own clock too (a day-long window barely moves in a test).
 */
export const DAILY: readonly (readonly [string, Policy])[] = [
  ['fixedWindow', fixedWindow({ limit: 3, window: '1d' })],
  ['slidingWindow', slidingWindow({ limit: 3, window: '1d' })],
  ['slidingWindowLog', slidingWindowLog({ limit: 3, window: '1d' })],
  ['tokenBucket', tokenBucket({ limit: 3, interval: '1d' })],
  ['leakyBucket', leakyBucket({ limit: 3, interval: '1d', queue: 2 })],
  ['quota', quota({ limit: 3, per: 'day' })],
];

/**
 * Every kind with `limit` per day (a month's quota; a leaky bucket's queue the rest of its
 * capacity), named `name` when given: a window long enough that real time adds nothing back
 * during a test.
 */
export function perDayOfEveryKind(limit: number, name?: string): readonly Policy[] {
  const named = name === undefined ? {} : { name };
  return [
    fixedWindow({ limit, window: '1d', ...named }),
    slidingWindow({ limit, window: '1d', ...named }),
    slidingWindowLog({ limit, window: '1d', ...named }),
    tokenBucket({ limit, interval: '1d', ...named }),
    leakyBucket({ limit, interval: '1d', queue: limit - 1, ...named }),
    quota({ limit, per: 'month', ...named }),
  ];
}
