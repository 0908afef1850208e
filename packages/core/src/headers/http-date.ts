/**
 * RFC 9110 §5.6.7 HTTP-date, all three forms, matched exactly: `Date.parse` accepts almost
 * anything and reads it in local time, which is how a garbage header becomes a real wait.
 */

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = `(${MONTHS.join('|')})`;
const DAY_NAME = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const DAY_NAME_L = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

// Sun, 06 Nov 1994 08:49:37 GMT
const IMF_FIXDATE = new RegExp(`^${DAY_NAME}, (\\d{2}) ${MONTH} (\\d{4}) ${TIME} GMT$`);
// Sunday, 06-Nov-94 08:49:37 GMT
const RFC850_DATE = new RegExp(`^${DAY_NAME_L}, (\\d{2})-${MONTH}-(\\d{2}) ${TIME} GMT$`);
// Sun Nov  6 08:49:37 1994
const ASCTIME_DATE = new RegExp(`^${DAY_NAME} ${MONTH} ( \\d|\\d{2}) ${TIME} (\\d{4})$`);

interface Parts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/** Epoch ms of an HTTP-date, or `undefined` when it is not one (including `Feb 30`). */
export function parseHttpDate(value: string, now: number): number | undefined {
  let m = IMF_FIXDATE.exec(value);
  if (m) return toMillis(parts(m[3], m[2], m[1], m[4], m[5], m[6]));
  m = RFC850_DATE.exec(value);
  if (m) {
    const p = parts(m[3], m[2], m[1], m[4], m[5], m[6]);
    return toMillis({ ...p, year: resolveTwoDigitYear(p, now) });
  }
  m = ASCTIME_DATE.exec(value);
  if (m) return toMillis(parts(m[6], m[1], m[2], m[3], m[4], m[5]));
  return undefined;
}

function parts(
  year: string | undefined,
  month: string | undefined,
  day: string | undefined,
  hour: string | undefined,
  minute: string | undefined,
  second: string | undefined,
): Parts {
  return {
    year: Number(year),
    month: MONTHS.indexOf(month ?? ''),
    day: Number(day?.trim()),
    hour: Number(hour),
    minute: Number(minute),
    second: Number(second),
  };
}

/**
 * The weekday is not checked against the date: RFC 9110 asks recipients to be robust, and the
 * date alone is unambiguous. Calendar validity is checked, since `Date` silently rolls
 * `Feb 30` over into March.
 */
function toMillis(p: Parts): number | undefined {
  if (p.month < 0 || p.hour > 23 || p.minute > 59 || p.second > 60) return undefined;
  // Only 23:59:60 can be a leap second.
  if (p.second === 60 && (p.hour !== 23 || p.minute !== 59)) return undefined;
  const d = new Date(0);
  // setUTCFullYear, not Date.UTC: the latter maps years 0–99 to 1900–1999.
  d.setUTCFullYear(p.year, p.month, p.day);
  if (d.getUTCFullYear() !== p.year || d.getUTCMonth() !== p.month || d.getUTCDate() !== p.day) {
    return undefined;
  }
  return d.getTime() + ((p.hour * 60 + p.minute) * 60 + p.second) * 1000;
}

/**
 * RFC 9110 §5.6.7: a two-digit year that would put the timestamp more than 50 years in the
 * future means the most recent past year with those last two digits. The comparison uses
 * unvalidated (rolled-over) dates so that e.g. `29-Feb-00` picks its century before the
 * calendar check rejects it, rather than skipping to a century where it happens to be valid.
 */
function resolveTwoDigitYear(p: Parts, now: number): number {
  const limit = new Date(now);
  limit.setUTCFullYear(limit.getUTCFullYear() + 50);
  const nowYear = new Date(now).getUTCFullYear();
  let year = nowYear - (nowYear % 100) + p.year + 100;
  for (let i = 0; i < 3; i++) {
    const d = new Date(0);
    d.setUTCFullYear(year, p.month, p.day);
    d.setUTCHours(p.hour, p.minute, p.second);
    if (d.getTime() <= limit.getTime()) return year;
    year -= 100;
  }
  return year;
}
