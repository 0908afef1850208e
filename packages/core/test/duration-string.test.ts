import { describe, expect, it } from 'vitest';
import { durationStringMs, parseDuration } from '../src/duration.js';

describe('durationStringMs: the grammar of parseDuration, 0 allowed, undefined when unread', () => {
  it.each([
    ['0', undefined],
    ['0ms', 0],
    ['0 s', 0],
    ['0.0m', 0],
    ['1.5s', 1500],
    ['0.017m', 1020],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    [' 4.1m ', 246_000],
    ['0.5ms', undefined],
    ['1.0005s', undefined],
    ['1w', undefined],
    ['1e3ms', undefined],
    ['-1s', undefined],
    ['+1s', undefined],
    ['.5s', undefined],
    ['99999999999999d', undefined],
    ['', undefined],
  ] as const)('%j → %j', (text, ms) => {
    expect(durationStringMs(text)).toBe(ms);
  });

  it('parseDuration agrees wherever it accepts, and keeps its messages', () => {
    for (const text of ['1ms', '1.5s', '0.017m', '2.3h', '7d']) {
      expect(parseDuration(text, 'w')).toBe(durationStringMs(text));
    }
    expect(() => parseDuration('1w', 'window')).toThrow('window: cannot read duration "1w"');
    expect(() => parseDuration('0s', 'window')).toThrow(
      'window: must be a positive whole number of ms, got 0s',
    );
    expect(() => parseDuration('1.0005s', 'window')).toThrow(
      'window: must be a positive whole number of ms, got 1.0005s',
    );
  });
});
