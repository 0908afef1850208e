// Calendar periods (a day, a week from Monday, a month from the 1st) in an IANA time zone, found
// with Intl.DateTimeFormat alone: core runs on edge runtimes and in browsers, so no node:* and no
// date library (Intl carries the time zone database already). quota.ts counts per period.
import { FloodgateError } from './errors.js';

/** The calendar unit a quota counts per. */
export type CalendarUnit = 'day' | 'week' | 'month';

const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;
// Every UTC offset in the database lies within ±15 h: a local date starts within this of its
// UTC midnight, whatever the zone and its transitions.
const REACH_MS = 36 * HOUR_MS;

const formats = new Map<string, Intl.DateTimeFormat>();

function formatOf(zone: string): Intl.DateTimeFormat {
  let f = formats.get(zone);
  if (f === undefined) {
    // hourCycle h23: midnight reads 0 (hour12: false printed 24 in some engines).
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formats.set(zone, f);
  }
  return f;
}

/**
 * Checks an IANA time zone name the way the stores will use it (Intl accepts it), so a typo is
 * `INVALID_POLICY` at construction rather than an error at the first decision.
 */
export function checkTimeZone(zone: unknown, what: string): string {
  if (typeof zone !== 'string' || zone.length === 0 || zone.length > 64) {
    throw new FloodgateError('INVALID_POLICY', `${what} must be an IANA time zone name`);
  }
  try {
    formatOf(zone);
  } catch {
    throw new FloodgateError('INVALID_POLICY', `${what}: unknown time zone "${zone}"`);
  }
  return zone;
}

/** The local wall clock at instant `u`, as if it were UTC: ms since the epoch. */
function wallMs(f: Intl.DateTimeFormat, u: number): number {
  let y = 0;
  let mo = 0;
  let d = 0;
  let h = 0;
  let mi = 0;
  let s = 0;
  for (const part of f.formatToParts(u)) {
    const n = Number(part.value);
    switch (part.type) {
      case 'year':
        y = n;
        break;
      case 'month':
        mo = n;
        break;
      case 'day':
        d = n;
        break;
      case 'hour':
        h = n;
        break;
      case 'minute':
        mi = n;
        break;
      case 'second':
        s = n;
        break;
    }
  }
  return Date.UTC(y, mo - 1, d, h, mi, s) + (((u % 1000) + 1000) % 1000);
}

/** The local date at `u`, as the UTC midnight of that date (a "civil" day). */
function civilAt(f: Intl.DateTimeFormat, u: number): number {
  const w = wallMs(f, u);
  return w - (((w % DAY_MS) + DAY_MS) % DAY_MS);
}

/**
 * The first instant whose local date is `civil` or later: local midnight, or where midnight does
 * not exist (a zone that springs forward at 00:00), the first instant of that date. Where the clock
 * falls back across midnight (Newfoundland switched at 00:01 from 2006 to 2010), the date begins
 * twice; this is the first time, so a period never goes back to the one before.
 */
function startOf(f: Intl.DateTimeFormat, civil: number): number {
  // Midnight less the offset in force there: right unless a transition lies between the guess and
  // midnight, which the second round corrects, and the check below catches any other case.
  let u = civil - (wallMs(f, civil) - civil);
  u = civil - (wallMs(f, u) - u);
  if (!beginsAt(f, civil, u)) {
    // A transition at midnight (no 00:00, or 00:00 twice): search for an instant the date begins.
    let lo = civil - REACH_MS;
    let hi = civil + REACH_MS;
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (civilAt(f, mid) >= civil) hi = mid;
      else lo = mid;
    }
    u = hi;
  }
  // The guess or the search may have found the second beginning of a date whose clock fell back
  // across midnight: the first lies the jump earlier, if the date already read `civil` there.
  for (let round = 0; round < 2; round++) {
    const before = u - REACH_MS;
    const jump = wallMs(f, before) - before - (wallMs(f, u) - u);
    if (jump <= 0 || !beginsAt(f, civil, u - jump)) break;
    u -= jump;
  }
  return u;
}

/** Whether the local date turns `civil` (or later) at `u`: it is at `u` and was not just before. */
function beginsAt(f: Intl.DateTimeFormat, civil: number, u: number): boolean {
  return civilAt(f, u) >= civil && civilAt(f, u - 1) < civil;
}

/** The first day of the period holding the local date `civil`. */
function firstDay(unit: CalendarUnit, civil: number): number {
  if (unit === 'day') return civil;
  const date = new Date(civil);
  if (unit === 'week') return civil - ((date.getUTCDay() + 6) % 7) * DAY_MS;
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1);
}

/** The first day of the period `n` periods after the one starting on `first`. */
function shift(unit: CalendarUnit, first: number, n: number): number {
  if (unit === 'day') return first + n * DAY_MS;
  if (unit === 'week') return first + 7 * n * DAY_MS;
  const date = new Date(first);
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + n, 1);
}

/**
 * One calendar's periods around the last instant asked about: `b0` ≤ that instant < `b1` < `b2`,
 * where `b0` starts its period, `b1` ends it and `b2` ends the next; with their decimal strings
 * for a script's ARGV. Moving to the next period costs one new boundary; a jump costs four.
 */
export class CalendarPeriods {
  b0 = 0;
  b1 = 0;
  b2 = 0;
  s0 = '0';
  s1 = '0';
  s2 = '0';
  /** The first local day of the period [b0, b1) (a civil day, see `civilAt`). */
  #first = 0;
  readonly #format: Intl.DateTimeFormat;

  constructor(
    readonly unit: CalendarUnit,
    readonly timeZone: string,
  ) {
    this.#format = formatOf(timeZone);
  }

  /** Sets `b0`, `b1`, `b2` around `t` (integer ms) and returns this. */
  at(t: number): this {
    if (!(t >= this.b0 && t < this.b1)) this.#move(t);
    return this;
  }

  #move(t: number): void {
    const f = this.#format;
    const unit = this.unit;
    let first: number;
    let b0: number;
    let b1: number;
    if (t >= this.b1 && t < this.b2) {
      // The period changed to the next one: the common move, one new boundary.
      first = shift(unit, this.#first, 1);
      b0 = this.b1;
      b1 = this.b2;
    } else {
      first = firstDay(unit, civilAt(f, t));
      b0 = startOf(f, first);
      b1 = startOf(f, shift(unit, first, 1));
      // A local date that runs backward (a fold across midnight) can leave t outside: step.
      while (t < b0) {
        first = shift(unit, first, -1);
        b1 = b0;
        b0 = startOf(f, first);
      }
      while (t >= b1) {
        first = shift(unit, first, 1);
        b0 = b1;
        b1 = startOf(f, shift(unit, first, 1));
      }
    }
    const b2 = startOf(f, shift(unit, first, 2));
    this.#first = first;
    this.b0 = b0;
    this.b1 = b1;
    this.b2 = b2;
    this.s0 = String(b0);
    this.s1 = String(b1);
    this.s2 = String(b2);
  }
}

const calendars = new Map<string, CalendarPeriods>();

/**
 * The shared `CalendarPeriods` of a unit and zone: one per calendar in this process, so every
 * limiter on it moves it once per period.
 */
export function calendarOf(unit: CalendarUnit, timeZone: string): CalendarPeriods {
  const name = `${unit} ${timeZone}`;
  let c = calendars.get(name);
  if (c === undefined) {
    c = new CalendarPeriods(unit, timeZone);
    calendars.set(name, c);
  }
  return c;
}

/**
 * The period `[start, end)` of `unit` in `timeZone` holding the instant `t` (ms): local midnight
 * (Monday's for a week, the 1st's for a month) to the next, exact across daylight-saving changes.
 * E.g. `calendarPeriod('day', 'Europe/Berlin', Date.UTC(2024, 2, 31, 12))` spans 23 hours.
 */
export function calendarPeriod(
  unit: CalendarUnit,
  timeZone: string,
  t: number,
): [start: number, end: number] {
  const c = new CalendarPeriods(unit, checkTimeZone(timeZone, 'timeZone')).at(t);
  return [c.b0, c.b1];
}
