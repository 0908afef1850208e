import { describe, expect, it } from 'vitest';
import { formatRetryAfter, parseRetryAfter } from '../src/headers/index.js';

describe('formatRetryAfter', () => {
  it.each([
    [0, '0'],
    [1, '1'],
    [999, '1'],
    [1000, '1'],
    [1001, '2'],
    [59_999, '60'],
    [-5, '0'],
    [Number.NaN, '0'],
  ])('%d ms -> %s', (ms, expected) => {
    expect(formatRetryAfter(ms)).toBe(expected);
  });

  it('adds jitter from the injected random: 0 adds nothing, 0.999 nearly the whole span', () => {
    expect(formatRetryAfter(1000, 5000, () => 0)).toBe('1');
    expect(formatRetryAfter(1000, 5000, () => 0.999)).toBe('6');
    expect(formatRetryAfter(1001, 5000, () => 0.999)).toBe('6');
    expect(formatRetryAfter(1000, 5000, () => 0.5)).toBe('4');
  });

  it('never subtracts, even with a misbehaving random source', () => {
    expect(formatRetryAfter(3000, 5000, () => -1)).toBe('3');
    expect(formatRetryAfter(3000, 5000, () => Number.NaN)).toBe('3');
    expect(formatRetryAfter(3000, 5000, () => 7)).toBe('8');
    expect(formatRetryAfter(3000, Number.POSITIVE_INFINITY, () => 0)).toBe('3');
    for (let ms = 0; ms <= 5000; ms += 137) {
      for (const r of [0, 0.1, 0.5, 0.999]) {
        const withJitter = Number(formatRetryAfter(ms, 2000, () => r));
        expect(withJitter).toBeGreaterThanOrEqual(Number(formatRetryAfter(ms)));
        expect(withJitter * 1000).toBeGreaterThanOrEqual(ms + r * 2000);
        expect(withJitter).toBeLessThanOrEqual(Math.ceil((ms + 2000) / 1000));
      }
    }
  });

  it('ignores a zero or negative jitter span without calling random', () => {
    const random = () => {
      throw new Error('should not be called');
    };
    expect(formatRetryAfter(1500, 0, random)).toBe('2');
    expect(formatRetryAfter(1500, -100, random)).toBe('2');
  });

  it('round-trips through parseRetryAfter without ever shortening the wait', () => {
    for (const ms of [1, 999, 1000, 1001, 65_432]) {
      const back = parseRetryAfter(formatRetryAfter(ms));
      expect(back).toBeGreaterThanOrEqual(ms);
      expect(back! - ms).toBeLessThan(1000);
    }
  });
});

describe('parseRetryAfter: delay-seconds', () => {
  it.each([
    ['0', 0],
    ['1', 1000],
    ['120', 120_000],
    ['007', 7000],
    [' 5\t', 5000],
  ])('%j -> %d ms', (value, ms) => {
    expect(parseRetryAfter(value)).toBe(ms);
  });
});

describe('parseRetryAfter: HTTP-date', () => {
  // 37 s before the RFC 9110 example date.
  const now = Date.UTC(1994, 10, 6, 8, 49, 0);

  it.each([
    ['IMF-fixdate', 'Sun, 06 Nov 1994 08:49:37 GMT'],
    ['RFC 850', 'Sunday, 06-Nov-94 08:49:37 GMT'],
    ['asctime', 'Sun Nov  6 08:49:37 1994'],
  ])('%s', (_form, value) => {
    expect(parseRetryAfter(value, now)).toBe(37_000);
  });

  it('reads a two-digit asctime day and rounds a sub-second now up', () => {
    expect(parseRetryAfter('Wed Nov 16 00:00:00 1994', Date.UTC(1994, 10, 15, 23, 59, 59))).toBe(
      1000,
    );
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', now + 36_999.5)).toBe(1);
  });

  it('returns 0 for a date in the past', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', Date.UTC(2025, 0, 1))).toBe(0);
  });

  it('defaults now to Date.now()', () => {
    const inAMinute = new Date(Date.now() + 61_000).toUTCString();
    const ms = parseRetryAfter(inAMinute);
    expect(ms).toBeGreaterThan(55_000);
    expect(ms).toBeLessThanOrEqual(61_000);
  });

  it('accepts a leap second and Feb 29 of a leap year', () => {
    expect(
      parseRetryAfter('Sat, 31 Dec 2016 23:59:60 GMT', Date.UTC(2016, 11, 31, 23, 59, 0)),
    ).toBe(60_000);
    expect(parseRetryAfter('Thu, 29 Feb 1996 00:00:01 GMT', Date.UTC(1996, 1, 29))).toBe(1000);
  });
});

describe('parseRetryAfter: RFC 850 two-digit years (RFC 9110 §5.6.7)', () => {
  const now = Date.UTC(2025, 0, 1);

  it('a year up to 50 years ahead is in this century', () => {
    expect(parseRetryAfter('Tuesday, 01-Jan-75 00:00:00 GMT', now)).toBe(
      Date.UTC(2075, 0, 1) - now,
    );
    expect(parseRetryAfter('Wednesday, 01-Jan-25 00:00:10 GMT', now)).toBe(10_000);
  });

  it('a year more than 50 years ahead is in the past century', () => {
    expect(parseRetryAfter('Thursday, 02-Jan-75 00:00:00 GMT', now)).toBe(0);
    expect(parseRetryAfter('Sunday, 06-Nov-94 08:49:37 GMT', now)).toBe(0);
  });

  it('late in a century, a small year is in the next one', () => {
    const late = Date.UTC(2090, 0, 1);
    expect(parseRetryAfter('Monday, 15-Jun-05 00:00:00 GMT', late)).toBe(
      Date.UTC(2105, 5, 15) - late,
    );
  });
});

describe('parseRetryAfter: malformed input is undefined, never an exception', () => {
  it.each([
    null,
    undefined,
    '',
    '   ',
    'soon',
    '-1',
    '+5',
    '1.5',
    '1e3',
    '0x10',
    '5 s',
    '99999999999999999999',
    '9007199254741',
    'Sun, 30 Feb 1994 08:49:37 GMT',
    'Tue, 29 Feb 1995 08:49:37 GMT',
    'Sun, 00 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    'Sun, 06 Nov 1994 08:60:00 GMT',
    'Sun, 06 Nov 1994 08:49:60 GMT',
    'Sun, 06 Nov 1994 08:49:37 UTC',
    'Sun, 06 Nov 1994 08:49:37 gmt',
    'sun, 06 nov 1994 08:49:37 GMT',
    'Sun, 6 Nov 1994 08:49:37 GMT',
    'Sun 06 Nov 1994 08:49:37 GMT',
    'Sun, 06 Nov 94 08:49:37 GMT',
    'Sunday, 06-Nov-1994 08:49:37 GMT',
    'Sun, 06-Nov-94 08:49:37 GMT',
    'Sun Nov 6 08:49:37 1994',
    'Sun Nov  6 08:49:37 1994 GMT',
    'Sun Nov 31 08:49:37 1994',
    'Nov 6 1994',
    '1994-11-06T08:49:37Z',
    'Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT',
  ])('%j', (value) => {
    expect(() => parseRetryAfter(value, Date.UTC(1994, 0, 1))).not.toThrow();
    expect(parseRetryAfter(value, Date.UTC(1994, 0, 1))).toBeUndefined();
  });

  it('a non-finite now cannot turn a date into NaN', () => {
    expect(parseRetryAfter('Sun, 06 Nov 1994 08:49:37 GMT', Number.NaN)).toBeUndefined();
    expect(parseRetryAfter('3', Number.NaN)).toBe(3000);
  });
});
