// The calendar math of quota: hand-checked seams (daylight-saving days of 23, 23.5, 24.5 and 25
// hours, a +5:45 zone, months of 28 to 31 days, weeks across a year end) and random instants over
// 50 years compared with a reference that finds local midnights its own way: it walks the clock
// an hour at a time reading the local date (a minute at a time where the offset changes), then
// bisects to the millisecond.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CalendarPeriods, type CalendarUnit, calendarPeriod } from '../src/calendar.js';

const H = 3_600_000;
const iso = (s: string) => Date.parse(s);

describe('calendarPeriod: hand-checked seams', () => {
  const cases: [CalendarUnit, string, string, string, string][] = [
    // unit, zone, an instant in the period, its start, its end (from the zone's published rules)
    ['day', 'UTC', '2024-05-05T12:00:00Z', '2024-05-05T00:00:00Z', '2024-05-06T00:00:00Z'],
    [
      'day',
      'Europe/Berlin',
      '2024-03-31T12:00:00Z',
      '2024-03-30T23:00:00Z',
      '2024-03-31T22:00:00Z',
    ],
    [
      'day',
      'Europe/Berlin',
      '2024-10-27T12:00:00Z',
      '2024-10-26T22:00:00Z',
      '2024-10-27T23:00:00Z',
    ],
    [
      'day',
      'America/New_York',
      '2024-03-10T12:00:00Z',
      '2024-03-10T05:00:00Z',
      '2024-03-11T04:00:00Z',
    ],
    [
      'day',
      'America/New_York',
      '2024-11-03T12:00:00Z',
      '2024-11-03T04:00:00Z',
      '2024-11-04T05:00:00Z',
    ],
    // Lord Howe moves its clocks by 30 minutes: days of 24.5 and 23.5 hours.
    [
      'day',
      'Australia/Lord_Howe',
      '2024-04-07T05:00:00Z',
      '2024-04-06T13:00:00Z',
      '2024-04-07T13:30:00Z',
    ],
    [
      'day',
      'Australia/Lord_Howe',
      '2024-10-06T05:00:00Z',
      '2024-10-05T13:30:00Z',
      '2024-10-06T13:00:00Z',
    ],
    [
      'day',
      'Asia/Kathmandu',
      '2024-06-15T12:00:00Z',
      '2024-06-14T18:15:00Z',
      '2024-06-15T18:15:00Z',
    ],
    // Newfoundland fell back at 00:01 from 2006 to 2010: 29 October 2006 began at 00:00 NDT, and a
    // minute later the clock read 23:01 on the 28th again. The day turns once, the first time: the
    // 28th has 24 hours, the 29th 25, and the hour that reads the 28th again belongs to the 29th.
    [
      'day',
      'America/St_Johns',
      '2006-10-28T12:00:00Z',
      '2006-10-28T02:30:00Z',
      '2006-10-29T02:30:00Z',
    ],
    [
      'day',
      'America/St_Johns',
      '2006-10-29T02:45:00Z',
      '2006-10-29T02:30:00Z',
      '2006-10-30T03:30:00Z',
    ],
    ['week', 'UTC', '2024-01-03T12:00:00Z', '2024-01-01T00:00:00Z', '2024-01-08T00:00:00Z'],
    ['week', 'UTC', '2025-01-01T00:00:00Z', '2024-12-30T00:00:00Z', '2025-01-06T00:00:00Z'],
    // Sunday 23:30 in New York is Monday in UTC: still the week that began the Monday before.
    [
      'week',
      'America/New_York',
      '2024-03-11T03:30:00Z',
      '2024-03-04T05:00:00Z',
      '2024-03-11T04:00:00Z',
    ],
    ['month', 'UTC', '2024-02-10T00:00:00Z', '2024-02-01T00:00:00Z', '2024-03-01T00:00:00Z'],
    ['month', 'UTC', '2023-02-10T00:00:00Z', '2023-02-01T00:00:00Z', '2023-03-01T00:00:00Z'],
    ['month', 'UTC', '2023-04-30T23:59:59.999Z', '2023-04-01T00:00:00Z', '2023-05-01T00:00:00Z'],
    [
      'month',
      'Europe/Berlin',
      '2024-03-15T00:00:00Z',
      '2024-02-29T23:00:00Z',
      '2024-03-31T22:00:00Z',
    ],
    [
      'month',
      'Asia/Kathmandu',
      '2024-12-31T18:15:00Z',
      '2024-12-31T18:15:00Z',
      '2025-01-31T18:15:00Z',
    ],
  ];
  for (const [unit, zone, at, start, end] of cases) {
    it(`${unit} in ${zone} at ${at}`, () => {
      expect(calendarPeriod(unit, zone, iso(at))).toEqual([iso(start), iso(end)]);
    });
  }

  it('days of 23, 25, 24.5 and 23.5 hours', () => {
    const length = (zone: string, at: string) => {
      const [start, end] = calendarPeriod('day', zone, iso(at));
      return (end - start) / H;
    };
    expect(length('Europe/Berlin', '2024-03-31T12:00:00Z')).toBe(23);
    expect(length('Europe/Berlin', '2024-10-27T12:00:00Z')).toBe(25);
    expect(length('Australia/Lord_Howe', '2024-04-07T05:00:00Z')).toBe(24.5);
    expect(length('Australia/Lord_Howe', '2024-10-06T05:00:00Z')).toBe(23.5);
  });

  it('is half-open: the first ms of the next period belongs to it', () => {
    const [, end] = calendarPeriod('day', 'Europe/Berlin', iso('2024-03-31T12:00:00Z'));
    expect(calendarPeriod('day', 'Europe/Berlin', end - 1)[1]).toBe(end);
    expect(calendarPeriod('day', 'Europe/Berlin', end)[0]).toBe(end);
  });

  it('CalendarPeriods moves forward one period at a time and jumps anywhere', () => {
    const c = new CalendarPeriods('day', 'America/New_York');
    c.at(iso('2024-03-09T12:00:00Z'));
    expect([c.b0, c.b1, c.b2]).toEqual([
      iso('2024-03-09T05:00:00Z'),
      iso('2024-03-10T05:00:00Z'),
      iso('2024-03-11T04:00:00Z'),
    ]);
    c.at(iso('2024-03-10T05:00:00Z'));
    expect([c.b0, c.b1, c.b2]).toEqual([
      iso('2024-03-10T05:00:00Z'),
      iso('2024-03-11T04:00:00Z'),
      iso('2024-03-12T04:00:00Z'),
    ]);
    expect([c.s0, c.s1, c.s2]).toEqual([c.b0, c.b1, c.b2].map(String));
    c.at(iso('2020-01-01T12:00:00Z'));
    expect(c.b0).toBe(iso('2020-01-01T05:00:00Z'));
  });
});

// The reference: local dates as 'YYYY-MM-DD' strings from a formatter of another locale, period
// starts found by walking and bisecting.
const dateFormats = new Map<string, Intl.DateTimeFormat>();
function localDate(zone: string, u: number): string {
  let f = dateFormats.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
    });
    dateFormats.set(zone, f);
  }
  return f.format(u);
}

function addDays(date: string, n: number): string {
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10);
}

function firstDate(unit: CalendarUnit, date: string): string {
  if (unit === 'day') return date;
  if (unit === 'month') return `${date.slice(0, 8)}01`;
  const [y, m, d] = date.split('-').map(Number) as [number, number, number];
  const weekday = new Date(Date.UTC(y, m - 1, d)).getUTCDay(); // 0 = Sunday
  return addDays(date, -((weekday + 6) % 7));
}

function nextFirst(unit: CalendarUnit, first: string): string {
  if (unit === 'day') return addDays(first, 1);
  if (unit === 'week') return addDays(first, 7);
  const [y, m] = first.split('-').map(Number) as [number, number];
  return new Date(Date.UTC(y, m, 1)).toISOString().slice(0, 10);
}

const M = 60_000;

/** The zone's offset at `u`, in ms (wall clock read as UTC, less `u`). */
function offsetAt(zone: string, u: number): number {
  let f = offsetFormats.get(zone);
  if (f === undefined) {
    f = new Intl.DateTimeFormat('en-CA', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    offsetFormats.set(zone, f);
  }
  const p = new Map<string, number>(f.formatToParts(u).map((x) => [x.type, Number(x.value)]));
  const n = (type: string) => p.get(type) ?? Number.NaN;
  const wall = Date.UTC(n('year'), n('month') - 1, n('day'), n('hour'), n('minute'), n('second'));
  return wall - (u - (u % 1000));
}
const offsetFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * The first instant whose local date is `date` or later (the definition the docs give). Walks the
 * day around the date's UTC midnight an hour at a time; an hour in which the date turns, or the
 * offset changes (a fold can hide a minute of the new date inside an hour that starts and ends on
 * the old one), is walked a minute at a time, and the minute where the date turns is bisected.
 */
function firstInstantOf(zone: string, date: string): number {
  const name = `${zone} ${date}`;
  let found = firstInstants.get(name);
  if (found === undefined) {
    found = walkToFirstInstant(zone, date);
    firstInstants.set(name, found);
  }
  return found;
}
const firstInstants = new Map<string, number>();

function walkToFirstInstant(zone: string, date: string): number {
  let u = Date.parse(`${date}T00:00:00Z`) - 16 * H;
  for (; ; u += H) {
    const turns = localDate(zone, u + H) >= date || offsetAt(zone, u) !== offsetAt(zone, u + H);
    if (!turns) continue;
    for (let m = u + M; m <= u + H; m += M) {
      if (localDate(zone, m) < date) continue;
      let lo = m - M;
      let hi = m;
      while (hi - lo > 1) {
        const mid = Math.floor((lo + hi) / 2);
        if (localDate(zone, mid) >= date) hi = mid;
        else lo = mid;
      }
      return hi;
    }
  }
}

function referencePeriod(unit: CalendarUnit, zone: string, t: number): [number, number] {
  let first = firstDate(unit, localDate(zone, t));
  let start = firstInstantOf(zone, first);
  let end = firstInstantOf(zone, nextFirst(unit, first));
  // A date read again after the clock fell back across midnight belongs to the period that began.
  while (t >= end) {
    first = nextFirst(unit, first);
    start = end;
    end = firstInstantOf(zone, nextFirst(unit, first));
  }
  return [start, end];
}

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'America/New_York',
  'Australia/Lord_Howe',
  'Asia/Kathmandu',
  // Daylight saving at midnight (no 00:00 on the day it starts), a zone that skipped a whole
  // day (Apia, 30 December 2011), quarter- and half-hour offsets.
  'America/Santiago',
  'Pacific/Apia',
  'Pacific/Chatham',
  'America/St_Johns',
  'Asia/Tehran',
] as const;

const instant = fc.integer({ min: Date.UTC(1995, 0, 1), max: Date.UTC(2045, 0, 1) });

// Hundreds of Intl readings per case: minutes, not seconds, of margin on a loaded CI machine.
describe('calendarPeriod equals the reference at random instants, 1995–2045', {
  timeout: 60_000,
}, () => {
  for (const unit of ['day', 'week', 'month'] as const) {
    it(unit, () => {
      fc.assert(
        fc.property(fc.constantFrom(...ZONES), instant, (zone, t) => {
          const [start, end] = calendarPeriod(unit, zone, t);
          expect([start, end], `${unit} ${zone} ${new Date(t).toISOString()}`).toEqual(
            referencePeriod(unit, zone, t),
          );
          expect(start).toBeLessThanOrEqual(t);
          expect(end).toBeGreaterThan(t);
        }),
        { numRuns: unit === 'month' ? 120 : 300 },
      );
    });
  }

  it('near the seams: a few ms either side of a local midnight', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        instant,
        fc.integer({ min: -3, max: 3 }),
        (zone, t, d) => {
          const [, end] = calendarPeriod('day', zone, t);
          const u = end + d;
          expect(calendarPeriod('day', zone, u)).toEqual(referencePeriod('day', zone, u));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('every 11 minutes across the days Newfoundland fell back at 00:01 (2006–2010)', () => {
    for (const day of ['2006-10-29', '2007-11-04', '2008-11-02', '2009-11-01', '2010-11-07']) {
      const from = Date.parse(`${day}T00:00:00Z`) - 24 * H;
      for (let t = from; t < from + 48 * H; t += 11 * 60_000) {
        const c = calendarPeriod('day', 'America/St_Johns', t);
        expect(c, new Date(t).toISOString()).toEqual(referencePeriod('day', 'America/St_Johns', t));
      }
    }
  });

  it('a shared CalendarPeriods walked through random times agrees with fresh ones', () => {
    const c = new CalendarPeriods('day', 'Australia/Lord_Howe');
    fc.assert(
      fc.property(instant, (t) => {
        c.at(t);
        const [start, end] = calendarPeriod('day', 'Australia/Lord_Howe', t);
        expect([c.b0, c.b1]).toEqual([start, end]);
        expect(c.b2).toBe(calendarPeriod('day', 'Australia/Lord_Howe', end)[1]);
      }),
      { numRuns: 200 },
    );
  });
});
