// The value formats model APIs use in their rate-limit headers. Each reader returns undefined for
// anything it cannot read, never throws: a header must not fail a request (as in core's parser).

/** A count header: digits only. Azure OpenAI sends `-1` when it has no figure; that is absent. */
const COUNT = /^[ \t]*(\d{1,15})[ \t]*$/;

export function readCount(value: string | null): number | undefined {
  const m = value === null ? null : COUNT.exec(value);
  return m ? Number(m[1]) : undefined;
}

/** Milliseconds per unit of a Go duration (`time.Duration.String()`, what OpenAI sends). */
const UNIT_MS: Readonly<Record<string, number>> = {
  h: 3_600_000,
  m: 60_000,
  s: 1000,
  ms: 1,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ns: 1e-6,
};
// `ms` before `m` and `s`, so that `20ms` is not read as 20 minutes and an `s`.
const PART = /(\d+(?:\.\d*)?|\.\d+)(ms|us|µs|μs|ns|h|m|s)/y;
/** A bare number, without a unit, is seconds: Azure OpenAI has been seen to send `0` and `30`. */
const BARE_SECONDS = /^\d+(?:\.\d+)?$/;

/**
 * A Go-style duration as OpenAI sends it in `x-ratelimit-reset-*` (`1s`, `6m0s`, `20ms`,
 * `1h2m3.5s`), in whole milliseconds rounded up: a wait read short would come back too early.
 */
export function readDuration(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  if (BARE_SECONDS.test(text)) return wholeMs(Number(text) * 1000);
  if (text === '') return undefined;
  let ms = 0;
  PART.lastIndex = 0;
  while (PART.lastIndex < text.length) {
    const m = PART.exec(text);
    if (!m) return undefined;
    ms += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
  }
  return wholeMs(ms);
}

function wholeMs(ms: number): number | undefined {
  const whole = Math.ceil(ms);
  return Number.isSafeInteger(whole) ? whole : undefined;
}

/**
 * `retry-after-ms`: a non-negative decimal number of milliseconds (openai-node reads it with
 * parseFloat; signs, exponents and trailing text are refused here instead of half-read).
 */
export function readRetryAfterMs(value: string | null): number | undefined {
  if (value === null) return undefined;
  const text = value.trim();
  return BARE_SECONDS.test(text) ? wholeMs(Number(text)) : undefined;
}

/**
 * RFC 3339 `date-time` (section 5.6): `2024-01-01T00:00:30Z`, with optional fraction and a `Z`
 * or `±hh:mm` offset; `t`, `z` and a space for the `T` are accepted as the RFC's note allows.
 */
const RFC3339 =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** An RFC 3339 instant in epoch ms (a fraction below 1 ms rounds up), or undefined. */
export function readRfc3339(value: string | null): number | undefined {
  const m = value === null ? null : RFC3339.exec(value.trim());
  if (!m) return undefined;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetH = m[8] ? 0 : Number(m[10]);
  const offsetM = m[8] ? 0 : Number(m[11]);
  // A leap second (60) is the last second of a minute; the next instant is as good a reading.
  if (hour > 23 || minute > 59 || second > 60 || offsetH > 23 || offsetM > 59) return undefined;
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  // setUTCFullYear rolls 30 February over into March: such a date is refused, not moved.
  if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return undefined;
  const fraction = m[7] ? Math.ceil(Number(`0.${m[7]}`) * 1000) : 0;
  const sign = m[9] === '-' ? -1 : 1;
  const offsetMs = sign * (offsetH * 60 + offsetM) * 60_000;
  return date.getTime() + ((hour * 60 + minute) * 60 + second) * 1000 + fraction - offsetMs;
}
