import { describe, expect, it } from 'vitest';
import { parseDuration } from '../src/duration.js';
import { isFloodgateError } from '../src/errors.js';

describe('parseDuration', () => {
  it.each([
    [1, 1],
    [250, 250],
    [Number.MAX_SAFE_INTEGER, Number.MAX_SAFE_INTEGER],
    ['1ms', 1],
    ['500ms', 500],
    ['30s', 30_000],
    ['1.5s', 1500],
    ['0.5s', 500],
    ['1m', 60_000],
    ['90m', 5_400_000],
    ['1h', 3_600_000],
    ['1d', 86_400_000],
    ['7d', 604_800_000],
    ['1 m', 60_000],
    [' 1m ', 60_000],
    ['0.001s', 1],
    // Decimals are exact: a float product would land a hair off these and be refused.
    ['2.3h', 8_280_000],
    ['4.1m', 246_000],
    ['2.01s', 2010],
    ['1.005s', 1005],
    ['0.1d', 8_640_000],
    ['1.10s', 1100],
    ['007.5s', 7500],
  ] as const)('%j → %d ms', (input, ms) => {
    expect(parseDuration(input, 'window')).toBe(ms);
  });

  it.each(
    [
      0,
      -1,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      Number.MAX_SAFE_INTEGER + 1,
      '',
      'abc',
      '1',
      '-1m',
      '+1m',
      '0s',
      '0.5ms',
      '0.0001s',
      '1.0005s',
      '1e3ms',
      '1M',
      '1 minute',
      '1m30s',
      'ms',
      '.5s',
      '1.s',
      '1  m',
      '99999999999999d',
      null,
      undefined,
      true,
      {},
      [1000],
      10n,
    ].map((v) => [
      typeof v === 'bigint' ? `${v}n` : typeof v === 'string' ? JSON.stringify(v) : String(v),
      v,
    ]),
  )('refuses %s with INVALID_POLICY naming the field', (_label, input) => {
    let error: unknown;
    try {
      parseDuration(input, 'tokenBucket: interval');
    } catch (e) {
      error = e;
    }
    expect(isFloodgateError(error)).toBe(true);
    expect((error as { code: string }).code).toBe('INVALID_POLICY');
    expect((error as Error).message).toContain('tokenBucket: interval');
  });
});
