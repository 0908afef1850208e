import fc from 'fast-check';
import type { Item } from 'structured-headers';
import { serializeDictionary, serializeItem, serializeList } from 'structured-headers';
import { describe, expect, it } from 'vitest';
import { combined } from '../src/binding.js';
import {
  draft8Reference,
  MEMBER_CACHE_MAX,
  MEMBER_NAME_MAX,
  memberCacheSize,
} from '../src/headers/draft8.js';
import { formatRateLimitHeaders, formatRetryAfter } from '../src/headers/index.js';
import { MAX_SF_INTEGER, msToSeconds, toCount } from '../src/headers/numbers.js';
import type { Decision, PolicyDecision } from '../src/types.js';
import { backMs, decisionOf, policy } from './headers-fixtures.js';

type Standard = 'draft-6' | 'draft-7' | 'draft-8' | false;

/**
 * Every header as the generic Structured Fields serialiser writes it, in the order
 * `formatRateLimitHeaders` sets them: the definition the hand-written draft-8 path must meet.
 */
function reference(decision: Decision, standard: Standard, legacy: boolean): [string, string][] {
  const policies = decision.policies.length > 0 ? decision.policies : [standInOf(decision)];
  const resetSeconds = msToSeconds(
    decision.allowed
      ? backMs(decision.binding)
      : Math.max(backMs(decision.binding), decision.retryAfterMs),
  );
  const windowMember = (p: PolicyDecision): Item => [
    toCount(p.limit),
    new Map(Number.isFinite(p.windowMs) ? [['w', msToSeconds(p.windowMs)]] : []),
  ];
  const out: [string, string][] = [];
  if (standard === 'draft-8') {
    out.push(...Object.entries(draft8Reference(policies)));
  } else if (standard === 'draft-7') {
    out.push([
      'RateLimit',
      serializeDictionary({
        limit: toCount(decision.limit),
        remaining: toCount(decision.remaining),
        reset: resetSeconds,
      }),
    ]);
    out.push(['RateLimit-Policy', serializeList(policies.map(windowMember))]);
  } else if (standard === 'draft-6') {
    out.push(['RateLimit-Limit', serializeItem(toCount(decision.limit))]);
    out.push(['RateLimit-Remaining', serializeItem(toCount(decision.remaining))]);
    out.push(['RateLimit-Reset', serializeItem(resetSeconds)]);
    out.push(['RateLimit-Policy', serializeList(policies.map(windowMember))]);
  }
  if (legacy) {
    out.push(['X-RateLimit-Limit', String(toCount(decision.limit))]);
    out.push(['X-RateLimit-Remaining', String(toCount(decision.remaining))]);
    out.push(['X-RateLimit-Reset', String(resetSeconds)]);
  }
  if (!decision.allowed) {
    out.push(['Retry-After', formatRetryAfter(decision.retryAfterMs, 0, () => 0)]);
  }
  return out;
}

function standInOf(decision: Decision): PolicyDecision {
  return policy({
    name: 'default',
    allowed: decision.allowed,
    limit: decision.limit,
    windowMs: Number.NaN,
    remaining: decision.remaining,
    resetAfterMs: decision.resetAfterMs,
    retryAfterMs: decision.retryAfterMs,
  });
}

const format = (d: Decision, standard: Standard = 'draft-8', legacy = false) =>
  Object.entries(formatRateLimitHeaders(d, { standard, legacy, random: () => 0 }));

/** Names that need no escaping, names that do, and the edges between. */
const arbName = fc.oneof(
  fc.constantFrom(
    'default',
    '',
    ' ',
    'per-ip',
    'a b',
    '"',
    '\\',
    'per "user"',
    'back\\slash',
    "~!#$%&'()*+,-./:;<=>?@[]^_`{|}",
    'ключ',
    '😀',
    '\x7f',
    '\x1f',
    '\t',
    '\n',
    '\u00a0',
    '\ud800',
  ),
  fc.string({ unit: 'binary-ascii', maxLength: 12 }),
  fc.string({ unit: 'grapheme', maxLength: 6 }),
  fc.string({ maxLength: 12 }),
);

/** Counts and durations, including what the header code clamps, floors and zeroes. */
const arbNumber = fc.oneof(
  fc.integer({ min: 0, max: 1_000_000 }),
  fc.integer({ min: -1_000, max: 3_000 }),
  fc.double(),
  fc.constantFrom(
    0,
    -0,
    0.4,
    999.5,
    1_000,
    1_001,
    MAX_SF_INTEGER,
    MAX_SF_INTEGER + 1,
    MAX_SF_INTEGER * 1_000 + 1,
    1e21,
    Number.MAX_VALUE,
    Number.POSITIVE_INFINITY,
    Number.NEGATIVE_INFINITY,
    Number.NaN,
  ),
);

const arbPolicy = fc.record({
  name: arbName,
  allowed: fc.boolean(),
  limit: arbNumber,
  windowMs: arbNumber,
  remaining: arbNumber,
  resetAfterMs: arbNumber,
  retryAfterMs: arbNumber,
});

/**
 * Decisions built directly rather than by the limiter's rules (which assume sane numbers): the
 * header code must match the reference for any binding policy and any decision-level numbers.
 */
const arbDecision = fc
  .record({
    policies: fc.array(arbPolicy, { minLength: 0, maxLength: 4 }),
    binding: fc.nat(),
    resetAfterMs: arbNumber,
    retryAfterMs: arbNumber,
  })
  .map(({ policies: raw, binding: at, resetAfterMs, retryAfterMs }): Decision => {
    const policies = raw.map((r) => policy(r));
    const binding = policies[at % Math.max(policies.length, 1)] ?? policy();
    return combined(
      policies.every((p) => p.allowed),
      binding,
      resetAfterMs,
      retryAfterMs,
      0,
      policies,
    );
  });

/** A decision of one policy, however odd its numbers. */
function oneOf(p: PolicyDecision): Decision {
  return { ...decisionOf([policy()]), policies: [p], binding: p };
}

const arbStandard = fc.constantFrom<Standard>('draft-6', 'draft-7', 'draft-8', false);

describe('formatRateLimitHeaders: the hand-written draft-8 fields', () => {
  it('equal the Structured Fields serialiser for any decision, standard and legacy flag', () => {
    fc.assert(
      fc.property(arbDecision, arbStandard, fc.boolean(), (decision, standard, legacy) => {
        const expected = reference(decision, standard, legacy);
        expect(format(decision, standard, legacy)).toEqual(expected);
        // A second call is served from the member cache and must not differ.
        expect(format(decision, standard, legacy)).toEqual(expected);
      }),
      { numRuns: 2_000 },
    );
  });

  it('do not serve a stale member when a name comes back with another quota', () => {
    const limits = fc.array(fc.tuple(arbNumber, arbNumber), { minLength: 1, maxLength: 8 });
    fc.assert(
      fc.property(arbName, limits, (name, quotas) => {
        for (const [limit, windowMs] of quotas) {
          const d = oneOf(policy({ name, limit, windowMs }));
          expect(format(d)).toEqual(reference(d, 'draft-8', false));
        }
      }),
    );
  });

  it('write exact strings for plain, escaped, replaced and clamped values', () => {
    const d = decisionOf([
      policy({ name: 'a', limit: 10.9, windowMs: 1, remaining: -3, resetAfterMs: 1_001 }),
      policy({ name: 'say "hi" \\o/', limit: Number.NaN, windowMs: 1_000, remaining: 0.5 }),
      policy({ name: 'éмoji 😀', limit: 1e300, windowMs: Number.POSITIVE_INFINITY }),
      policy({ name: '', remaining: Number.POSITIVE_INFINITY, resetAfterMs: Number.NaN }),
    ]);
    expect(formatRateLimitHeaders(d)).toEqual({
      RateLimit:
        '"a";r=0;t=2, "say \\"hi\\" \\\\o/";r=0;t=60, "??oji ??";r=99;t=60, "";r=999999999999999;t=0',
      'RateLimit-Policy':
        '"a";q=10;w=1, "say \\"hi\\" \\\\o/";q=0;w=1, "??oji ??";q=999999999999999, "";q=100;w=60',
    });
  });

  it('give a repeated stand-in policy no window, from the cache as on the first call', () => {
    const d = { ...decisionOf([policy({ limit: 7, remaining: 3 })]), policies: [] };
    for (let i = 0; i < 3; i++) {
      expect(formatRateLimitHeaders(d)).toEqual({
        RateLimit: '"default";r=3;t=60',
        'RateLimit-Policy': '"default";q=7',
      });
    }
  });

  it('keep the same name with two quotas in one decision apart', () => {
    const d = decisionOf([
      policy({ name: 'x', limit: 5, windowMs: 1_000 }),
      policy({ name: 'x', limit: 50, windowMs: 10_000 }),
    ]);
    expect(formatRateLimitHeaders(d)['RateLimit-Policy']).toBe('"x";q=5;w=1, "x";q=50;w=10');
  });

  it('cache at most MEMBER_CACHE_MAX names however many distinct names arrive', () => {
    let largest = 0;
    for (let i = 0; i < MEMBER_CACHE_MAX * 4 + 3; i++) {
      const d = decisionOf([policy({ name: `tenant-${i}`, limit: i + 1 })]);
      expect(formatRateLimitHeaders(d)['RateLimit-Policy']).toBe(`"tenant-${i}";q=${i + 1};w=60`);
      largest = Math.max(largest, memberCacheSize());
    }
    expect(largest).toBe(MEMBER_CACHE_MAX);
    expect(memberCacheSize()).toBeLessThanOrEqual(MEMBER_CACHE_MAX);
  });

  it('do not cache names longer than MEMBER_NAME_MAX, and still write them whole', () => {
    const before = memberCacheSize();
    for (const length of [MEMBER_NAME_MAX + 1, 10_000]) {
      const name = 'n'.repeat(length);
      const d = oneOf(policy({ name, limit: 3 }));
      expect(formatRateLimitHeaders(d)['RateLimit-Policy']).toBe(`"${name}";q=3;w=60`);
      expect(formatRateLimitHeaders(d).RateLimit).toBe(`"${name}";r=99;t=60`);
    }
    expect(memberCacheSize()).toBe(before);
    const atMost = oneOf(policy({ name: 'm'.repeat(MEMBER_NAME_MAX), limit: 3 }));
    formatRateLimitHeaders(atMost);
    // The property tests above fill the cache with random names; a full cache starts over.
    expect(memberCacheSize()).toBe(before >= MEMBER_CACHE_MAX ? 1 : before + 1);
  });
});
