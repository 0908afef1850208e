import { describe, expect, test } from 'vitest';
import { parseJitter } from '../src/adapter/index.js';

describe('retryAfterJitter reads durations with the policies grammar', () => {
  test.each([
    ['1h', [0, 3_600_000]],
    ['1d', [0, 86_400_000]],
    ['0.5 h', [0, 1_800_000]],
    ['0.017m', [0, 1020]],
    ['0ms', [0, 0]],
    [
      ['0s', '0.017m'],
      [0, 1020],
    ],
    [
      ['1m', '1h'],
      [60_000, 3_600_000],
    ],
  ] as const)('%j → %j', (value, expected) => {
    expect(parseJitter(value as never)).toEqual(expected);
  });

  test.each([['1w'], ['1e3ms'], [['0s', '1w']], [['1e3ms', '2s']], ['0.5ms'], ['-1s']])(
    '%j is refused with INVALID_OPTION',
    (value) => {
      expect(() => parseJitter(value as never)).toThrow(
        expect.objectContaining({
          code: 'INVALID_OPTION',
          message: expect.stringMatching(/^retryAfterJitter: /),
        }),
      );
    },
  );
});
