import type { Item } from 'structured-headers';
import { serializeList, serializeString } from 'structured-headers';
import { quotaBackMs } from '../binding.js';
import type { PolicyDecision } from '../types.js';
import { msToSeconds, toCount } from './numbers.js';

/**
 * The draft-8 `RateLimit` and `RateLimit-Policy` fields, written by hand: they run on every
 * response, and building `Item`s for the generic serialiser cost several times the rest of a
 * request's header work. `draft8Reference` is the generic path they must equal byte for byte.
 * Numbers can go straight into the text: `toCount` and `msToSeconds` only return integers within
 * the sf-integer range, for which the serialiser writes `String(n)` too.
 */

/**
 * Printable ASCII except `"` and `\`: an sf-string of these is the text between two quotes.
 * Anything else goes through `policyName` and the library's own escaping.
 */
const PLAIN_NAME = /^[\x20\x21\x23-\x5B\x5D-\x7E]*$/;

/**
 * Bound on cached policy names. Names are usually a handful of configured constants; the bound
 * keeps a caller that derives names from request data from growing the map without limit.
 */
export const MEMBER_CACHE_MAX = 256;

/** Longer names are written afresh on every call, so the cache's size is bounded in bytes too. */
export const MEMBER_NAME_MAX = 128;

interface CachedMember {
  readonly limit: number;
  readonly windowMs: number;
  /** The name as an sf-string, for `RateLimit`. */
  readonly name: string;
  /** The whole `RateLimit-Policy` member: it depends only on name, limit and window. */
  readonly quota: string;
}

const members = new Map<string, CachedMember>();

/** How many policy names are cached; for tests of the bound. */
export function memberCacheSize(): number {
  return members.size;
}

/**
 * Writes `RateLimit` then `RateLimit-Policy` (in that order, as callers iterate the headers)
 * for `policies`.
 */
export function writeDraft8(
  policies: readonly PolicyDecision[],
  headers: Record<string, string>,
): void {
  let remaining = '';
  let quota = '';
  for (let i = 0; i < policies.length; i++) {
    const p = policies[i]!;
    const member = memberOf(p);
    const sep = i === 0 ? '' : ', ';
    remaining += `${sep}${member.name};r=${toCount(p.remaining)};t=${msToSeconds(quotaBackMs(p))}`;
    quota += sep + member.quota;
  }
  headers.RateLimit = remaining;
  headers['RateLimit-Policy'] = quota;
}

function memberOf(p: PolicyDecision): CachedMember {
  const cached = members.get(p.name);
  // Object.is so that a NaN window (a stand-in policy) still hits.
  if (
    cached !== undefined &&
    Object.is(cached.limit, p.limit) &&
    Object.is(cached.windowMs, p.windowMs)
  ) {
    return cached;
  }
  const name = quotedName(p.name);
  // `w` is optional in the draft; better absent than a made-up window.
  const window = Number.isFinite(p.windowMs) ? `;w=${msToSeconds(p.windowMs)}` : '';
  const member = {
    limit: p.limit,
    windowMs: p.windowMs,
    name,
    quota: `${name};q=${toCount(p.limit)}${window}`,
  };
  // Clearing rather than evicting one: cheap, and a hostile stream of names costs a miss each
  // time, as it would without the cache.
  if (p.name.length > MEMBER_NAME_MAX) return member;
  if (cached === undefined && members.size >= MEMBER_CACHE_MAX) members.clear();
  members.set(p.name, member);
  return member;
}

function quotedName(name: string): string {
  if (typeof name === 'string' && PLAIN_NAME.test(name)) return `"${name}"`;
  return serializeString(policyName(name));
}

/**
 * Drafts 08–10 make the policy identifier an sf-string, which only holds printable ASCII. A
 * policy name is user text; one stray character must not turn a response into a 500.
 */
function policyName(name: string): string {
  return name.replace(/[^\x20-\x7E]/g, '?');
}

/**
 * The same two fields through the generic Structured Fields serialiser: the definition that
 * `writeDraft8` reproduces, kept callable so tests compare the two on arbitrary input.
 */
export function draft8Reference(policies: readonly PolicyDecision[]): Record<string, string> {
  return {
    RateLimit: serializeList(policies.map(remainingMember)),
    'RateLimit-Policy': serializeList(policies.map(quotaMember)),
  };
}

function remainingMember(p: PolicyDecision): Item {
  return [
    policyName(p.name),
    new Map([
      ['r', toCount(p.remaining)],
      ['t', msToSeconds(quotaBackMs(p))],
    ]),
  ];
}

function quotaMember(p: PolicyDecision): Item {
  const params = new Map([['q', toCount(p.limit)]]);
  if (Number.isFinite(p.windowMs)) params.set('w', msToSeconds(p.windowMs));
  return [policyName(p.name), params];
}
