import type { BareItem, InnerList, Item } from 'structured-headers';
import { isInnerList, parseDictionary, parseItem, parseList, Token } from 'structured-headers';
import type { RateLimitStandard } from './format.js';
import { isCount } from './numbers.js';

/**
 * What a response said about its rate limit. Fields the server did not send (or sent
 * malformed) are absent.
 * @example
 * Slowing down before the server has to say 429.
 * ```ts
 * import { type ParsedRateLimit, parseRateLimitHeaders } from '@floodgate/core/headers';
 *
 * const response = await fetch('https://api.example.com/items');
 * const info: ParsedRateLimit | undefined = parseRateLimitHeaders(response.headers);
 * if (info?.remaining === 0 && info.resetSeconds !== undefined) {
 *   console.log(`quota spent; it resets in ${info.resetSeconds} s`);
 * }
 * ```
 * @public
 */
export interface ParsedRateLimit {
  readonly source: RateLimitStandard | 'legacy';
  /** The policy identifier (draft-8 only). */
  readonly policy?: string;
  readonly limit?: number;
  readonly remaining?: number;
  /** Delta-seconds until the quota resets. */
  readonly resetSeconds?: number;
  /** The policy window in seconds, when `RateLimit-Policy` names one. */
  readonly windowSeconds?: number;
}

/**
 * Anything that holds response headers: a fetch `Headers`, a plain record (node:http style,
 * arrays for repeated fields, numbers as `getHeaders()` returns them), or `[name, value]` pairs.
 * @example
 * A helper that takes fetch `Headers` and node:http header records alike.
 * ```ts
 * import { parseRateLimitHeaders, type RateLimitHeadersInput } from '@floodgate/core/headers';
 *
 * function remaining(headers: RateLimitHeadersInput): number | undefined {
 *   return parseRateLimitHeaders(headers)?.remaining;
 * }
 * remaining({ 'ratelimit-remaining': '4', 'ratelimit-reset': '1' }); // 4
 * ```
 * @public
 */
export type RateLimitHeadersInput =
  | Headers
  | Readonly<Record<string, string | number | readonly string[] | undefined>>
  | Iterable<readonly [string, string]>;

/** From this on, an `X-RateLimit-Reset` is read as epoch seconds (Sep 2001), not as a delta. */
const EPOCH_THRESHOLD = 1e9;
const DIGITS = /^[ \t]*(\d{1,15})[ \t]*$/;

/**
 * Reads whichever rate-limit headers a response carries, preferring the newest form:
 * draft-8 > draft-7 > draft-6 > legacy `X-RateLimit-*`. Malformed fields are ignored (the draft
 * says so), and it never throws: a client must not fail a request because of a header.
 * @example
 * ```ts
 * import { parseRateLimitHeaders } from '@floodgate/core/headers';
 *
 * const headers = new Headers({
 *   RateLimit: '"burst";r=4;t=1',
 *   'RateLimit-Policy': '"burst";q=10;w=1',
 * });
 * const info = parseRateLimitHeaders(headers);
 * // { source: 'draft-8', policy: 'burst', limit: 10, windowSeconds: 1,
 * //   remaining: 4, resetSeconds: 1 }
 * ```
 * @public
 */
export function parseRateLimitHeaders(
  headers: RateLimitHeadersInput,
  now: number = Date.now(),
): ParsedRateLimit | undefined {
  let fields: Map<string, string>;
  try {
    fields = collect(headers);
  } catch {
    return undefined;
  }
  const rateLimit = fields.get('ratelimit');
  const policy = fields.get('ratelimit-policy');
  return (
    readDraft8(rateLimit, policy) ??
    readDraft7(rateLimit, policy) ??
    readDraft6(fields, policy) ??
    readLegacy(fields, now)
  );
}

/** Lower-cased names; repeated fields joined with ", " as RFC 9110 §5.3 allows for lists. */
function collect(headers: RateLimitHeadersInput): Map<string, string> {
  const out = new Map<string, string>();
  const add = (name: unknown, value: unknown): void => {
    if (typeof name !== 'string') return;
    const values: unknown[] = Array.isArray(value) ? value : [value];
    for (const v of values) {
      const text = typeof v === 'number' && Number.isFinite(v) ? String(v) : v;
      if (typeof text !== 'string') continue;
      const key = name.toLowerCase();
      const prev = out.get(key);
      out.set(key, prev === undefined ? text : `${prev}, ${text}`);
    }
  };
  if (headers == null || typeof headers !== 'object') return out;
  if (Symbol.iterator in headers) {
    for (const entry of headers as Iterable<unknown>) {
      if (Array.isArray(entry)) add(entry[0], entry[1]);
    }
  } else {
    for (const [name, value] of Object.entries(headers)) add(name, value);
  }
  return out;
}

function attempt<T>(parse: () => T): T | undefined {
  try {
    return parse();
  } catch {
    return undefined;
  }
}

/** -0 is a valid SF Integer ("-0") and would otherwise leak out as a negative zero. */
function count(value: unknown): number | undefined {
  return isCount(value) ? value + 0 : undefined;
}

/** Drafts 08–10 use an sf-string; later revisions also allow a token. Accept both. */
function nameOf(value: BareItem): string | undefined {
  if (typeof value === 'string') return value;
  if (value instanceof Token) return value.toString();
  return undefined;
}

function items(list: (Item | InnerList)[]): Item[] {
  return list.filter((m): m is Item => !isInnerList(m));
}

function readDraft8(
  rateLimit: string | undefined,
  policy: string | undefined,
): ParsedRateLimit | undefined {
  if (rateLimit === undefined) return undefined;
  const list = attempt(() => parseList(rateLimit));
  if (!list) return undefined;

  let best: { name: string; r: number; t: number | undefined } | undefined;
  for (const [value, params] of items(list)) {
    const name = nameOf(value);
    const r = count(params.get('r'));
    const rawT = params.get('t');
    const t = count(rawT);
    // A member with a broken `t` is dropped whole: half a member could understate the wait.
    if (name === undefined || r === undefined || (rawT !== undefined && t === undefined)) continue;
    // The member closest to running out binds; on a tie the longer reset is the safer one.
    if (!best || r < best.r || (r === best.r && (t ?? -1) > (best.t ?? -1))) best = { name, r, t };
  }
  if (!best) return undefined;

  const result: Mutable<ParsedRateLimit> = { source: 'draft-8', policy: best.name };
  const declared = policy === undefined ? undefined : attempt(() => parseList(policy));
  const match = declared && items(declared).find(([value]) => nameOf(value) === best.name);
  if (match) {
    const q = count(match[1].get('q'));
    const w = count(match[1].get('w'));
    if (q !== undefined) result.limit = q;
    if (w !== undefined) result.windowSeconds = w;
  }
  result.remaining = best.r;
  if (best.t !== undefined) result.resetSeconds = best.t;
  return result;
}

function readDraft7(
  rateLimit: string | undefined,
  policy: string | undefined,
): ParsedRateLimit | undefined {
  if (rateLimit === undefined) return undefined;
  const dict = attempt(() => parseDictionary(rateLimit));
  if (!dict) return undefined;
  const member = (key: string): number | undefined => {
    const m = dict.get(key);
    return m === undefined || isInnerList(m) ? undefined : count(m[0]);
  };
  return build('draft-7', member('limit'), member('remaining'), member('reset'), policy);
}

function readDraft6(
  fields: Map<string, string>,
  policy: string | undefined,
): ParsedRateLimit | undefined {
  const item = (name: string): number | undefined => {
    const raw = fields.get(name);
    if (raw === undefined) return undefined;
    const parsed = attempt(() => parseItem(raw));
    return parsed ? count(parsed[0]) : undefined;
  };
  return build(
    'draft-6',
    item('ratelimit-limit'),
    item('ratelimit-remaining'),
    item('ratelimit-reset'),
    policy,
  );
}

function readLegacy(fields: Map<string, string>, now: number): ParsedRateLimit | undefined {
  const digits = (name: string): number | undefined => {
    const m = DIGITS.exec(fields.get(name) ?? '');
    return m ? Number(m[1]) : undefined;
  };
  let reset = digits('x-ratelimit-reset');
  // Legacy servers disagree: GitHub sends epoch seconds, others a delta. No delta of 30+ years
  // is plausible, so the size decides.
  if (reset !== undefined && reset >= EPOCH_THRESHOLD) {
    reset = Number.isFinite(now) ? Math.max(0, Math.ceil(reset - now / 1000)) : undefined;
  }
  return build('legacy', digits('x-ratelimit-limit'), digits('x-ratelimit-remaining'), reset);
}

function build(
  source: ParsedRateLimit['source'],
  limit: number | undefined,
  remaining: number | undefined,
  resetSeconds: number | undefined,
  policy?: string,
): ParsedRateLimit | undefined {
  if (limit === undefined && remaining === undefined && resetSeconds === undefined) {
    return undefined;
  }
  const result: Mutable<ParsedRateLimit> = { source };
  if (limit !== undefined) result.limit = limit;
  if (remaining !== undefined) result.remaining = remaining;
  if (resetSeconds !== undefined) result.resetSeconds = resetSeconds;
  const w = limit === undefined ? undefined : windowFor(limit, policy);
  if (w !== undefined) result.windowSeconds = w;
  return result;
}

/** draft-6/7 policies are `limit;w=window` items; the one whose quota is our limit applies. */
function windowFor(limit: number, policy: string | undefined): number | undefined {
  if (policy === undefined) return undefined;
  const list = attempt(() => parseList(policy));
  const match = list && items(list).find(([value]) => value === limit);
  return match ? count(match[1].get('w')) : undefined;
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };
