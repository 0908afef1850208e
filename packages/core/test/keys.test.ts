import { createHash } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { isFloodgateError } from '../src/errors.js';
import {
  encodeIdentity,
  MAX_IDENTITY_BYTES,
  policyKey,
  validateIdentity,
  validatePrefix,
} from '../src/keys.js';

/** The inverse of the escaping, for identities short enough not to be hashed. */
function decode(encoded: string): string {
  return encoded.replace(
    /%u([0-9A-F]{4})|%([0-9A-F]{2})/g,
    (_, u: string | undefined, b: string | undefined) =>
      String.fromCharCode(Number.parseInt((u ?? b)!, 16)),
  );
}

/** Redis Cluster's hash tag rule: the part between the first `{` and the next `}`, if non-empty. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  if (open === -1) return key;
  const close = key.indexOf('}', open + 1);
  if (close === -1 || close === open + 1) return key;
  return key.slice(open + 1, close);
}

/** The escaping as documented, written independently: one code unit at a time. */
function escapeSpec(id: string): string {
  let out = '';
  for (let i = 0; i < id.length; i++) {
    const c = id.charCodeAt(i);
    const high = c >= 0xd800 && c <= 0xdbff;
    const low = c >= 0xdc00 && c <= 0xdfff;
    const next = id.charCodeAt(i + 1);
    if (high && next >= 0xdc00 && next <= 0xdfff) {
      out += id[i]! + id[i + 1]!;
      i++;
    } else if (high || low) {
      out += `%u${c.toString(16).toUpperCase()}`;
    } else if ('%{}#'.includes(id[i]!)) {
      out += `%${c.toString(16).toUpperCase()}`;
    } else {
      out += id[i];
    }
  }
  return out;
}

const byteLength = (s: string) => Buffer.byteLength(s, 'utf8');
/** Survives a UTF-8 round trip, i.e. has no lone surrogate Redis would turn into U+FFFD. */
const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

// Any UTF-16 code unit (lone surrogates included), the characters the encoding treats specially,
// and whole emoji.
const unit = fc.oneof(
  fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)),
  fc.constantFrom(
    '{',
    '}',
    '%',
    '#',
    ':',
    '\n',
    'u',
    '7',
    'B',
    '\uD800',
    '\uDBFF',
    '\uDC00',
    '\uDFFF',
    '\uFFFD',
  ),
  fc.constantFrom('😀', '👍🏽', '%7B', '%u', '%uD800', '%25'),
);
const identity = fc.oneof(
  { arbitrary: fc.string({ unit, minLength: 1, maxLength: 40 }), weight: 5 },
  { arbitrary: fc.string({ unit, minLength: 60, maxLength: 300 }), weight: 1 },
);

describe('encodeIdentity', () => {
  it('is injective: distinct identities, distinct encodings', () => {
    fc.assert(
      fc.property(fc.uniqueArray(identity, { minLength: 2, maxLength: 30 }), (ids) => {
        expect(new Set(ids.map(encodeIdentity)).size).toBe(ids.length);
      }),
      { numRuns: 500 },
    );
  });

  it('round-trips when short, so it cannot merge two identities', () => {
    fc.assert(
      fc.property(fc.string({ unit, minLength: 1, maxLength: 40 }), (id) => {
        const e = encodeIdentity(id);
        if (!e.startsWith('#')) expect(decode(e)).toBe(id);
      }),
      { numRuns: 1000 },
    );
  });

  it('has no braces, is valid UTF-8, is bounded, and is hashed exactly when too long', () => {
    fc.assert(
      fc.property(identity, (id) => {
        const e = encodeIdentity(id);
        expect(e).not.toMatch(/[{}]/);
        expect(wellFormed(e)).toBe(true);
        expect(byteLength(e)).toBeLessThanOrEqual(MAX_IDENTITY_BYTES);
        const escaped = escapeSpec(id);
        expect(e).toBe(
          byteLength(escaped) <= MAX_IDENTITY_BYTES
            ? escaped
            : `#${createHash('sha256').update(escaped, 'utf8').digest('base64url')}`,
        );
      }),
      { numRuns: 500 },
    );
  });

  it('encodes the same where the runtime has no String.prototype.isWellFormed', async () => {
    // The screen for lone surrogates falls back to a regular expression there (keys.ts).
    const proto = String.prototype as { isWellFormed?: unknown };
    const saved = Object.getOwnPropertyDescriptor(proto, 'isWellFormed');
    delete proto.isWellFormed;
    vi.resetModules();
    let without: typeof encodeIdentity;
    try {
      ({ encodeIdentity: without } = await import('../src/keys.js'));
    } finally {
      if (saved !== undefined) Object.defineProperty(proto, 'isWellFormed', saved);
      vi.resetModules();
    }
    expect(without).not.toBe(encodeIdentity);
    fc.assert(
      fc.property(identity, (id) => {
        expect(without(id)).toBe(encodeIdentity(id));
        const escaped = escapeSpec(id);
        if (byteLength(escaped) <= MAX_IDENTITY_BYTES) expect(without(id)).toBe(escaped);
      }),
      { numRuns: 500 },
    );
  });

  it('keeps lone surrogates and U+FFFD apart', () => {
    const ids = [
      '\uD800',
      '\uDFFF',
      '\uFFFD',
      '\uD800\uDFFF',
      '\uDFFF\uD800',
      '\uD83D',
      '\uDE00',
      '😀',
    ];
    const encoded = ids.map(encodeIdentity);
    expect(new Set(encoded).size).toBe(ids.length);
    expect(new Set(encoded.map((e) => Buffer.from(e, 'utf8').toString('hex'))).size).toBe(
      ids.length,
    );
    expect(encoded.slice(0, 3)).toEqual(['%uD800', '%uDFFF', '\uFFFD']);
    expect(encodeIdentity('😀')).toBe('😀');
  });

  it('escapes its own markers, so an identity cannot pose as an encoding', () => {
    expect(encodeIdentity('{')).toBe('%7B');
    expect(encodeIdentity('%7B')).toBe('%257B');
    expect(encodeIdentity('#abc')).toBe('%23abc');
    const long = 'x'.repeat(1000);
    const hashed = encodeIdentity(long);
    expect(hashed).toMatch(/^#[A-Za-z0-9_-]{43}$/);
    expect(encodeIdentity(hashed)).not.toBe(hashed);
    expect(encodeIdentity(`${long}y`)).not.toBe(hashed);
  });

  it('hashes from just past the bound, counting UTF-8 bytes of the escaped form', () => {
    expect(encodeIdentity('x'.repeat(MAX_IDENTITY_BYTES))).toBe('x'.repeat(MAX_IDENTITY_BYTES));
    expect(encodeIdentity('x'.repeat(MAX_IDENTITY_BYTES + 1)).startsWith('#')).toBe(true);
    expect(encodeIdentity('é'.repeat(MAX_IDENTITY_BYTES / 2)).startsWith('#')).toBe(false);
    expect(encodeIdentity(`${'é'.repeat(MAX_IDENTITY_BYTES / 2)}x`).startsWith('#')).toBe(true);
    expect(encodeIdentity('{'.repeat(MAX_IDENTITY_BYTES / 3)).startsWith('#')).toBe(false);
    expect(encodeIdentity('{'.repeat(MAX_IDENTITY_BYTES / 3 + 1)).startsWith('#')).toBe(true);
    expect(byteLength(encodeIdentity('x'.repeat(100_000)))).toBe(44);
  });
});

describe('policyKey', () => {
  it('lays keys out as <prefix>:{<identity>}:<policy id>', () => {
    expect(policyKey('api', encodeIdentity('user:1'), 'tb:100:60000:100')).toBe(
      'api:{user:1}:tb:100:60000:100',
    );
  });

  it('puts every key of an identity in the slot of its own hash tag, whatever it holds', () => {
    const prefix = fc.string({
      unit: fc.constantFrom('a', ':', '%', '#', '-', '\n'),
      maxLength: 8,
    });
    fc.assert(
      fc.property(
        prefix,
        identity,
        fc.constantFrom('fw:1:1000', 'tb:5:60000:10'),
        (p, id, policy) => {
          const e = encodeIdentity(id);
          expect(hashTag(policyKey(p, e, policy))).toBe(e);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('never maps two (prefix, identity) pairs without braces in the prefix to one key', () => {
    const prefix = fc.string({ unit: fc.constantFrom('a', ':', '%', 'b'), maxLength: 4 });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(prefix, identity), {
          minLength: 2,
          maxLength: 20,
          selector: ([p, i]) => `${p}\u0000${i}`,
        }),
        (pairs) => {
          const keys = pairs.map(([p, i]) => policyKey(p, encodeIdentity(i), 'fw:1:1000'));
          expect(new Set(keys).size).toBe(pairs.length);
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('validation', () => {
  const code = (fn: () => void) => {
    try {
      fn();
    } catch (e) {
      return isFloodgateError(e) ? e.code : 'not a FloodgateError';
    }
    return 'no error';
  };

  it('identities: non-empty strings only', () => {
    for (const bad of ['', undefined, null, 1, {}, ['a']])
      expect(code(() => validateIdentity(bad))).toBe('INVALID_KEY');
    for (const good of ['a', ' ', '\0', '{', 'x'.repeat(1e5)])
      expect(code(() => validateIdentity(good))).toBe('no error');
  });

  it('prefixes: strings without braces (which would move the hash tag)', () => {
    for (const bad of ['a{', '}', '{x}', 1, null])
      expect(code(() => validatePrefix(bad))).toBe('INVALID_OPTION');
    for (const good of ['', 'api', 'a:b', 'x%#'])
      expect(code(() => validatePrefix(good))).toBe('no error');
  });
});
