import { fixedWindow, slidingWindow, slidingWindowLog, tokenBucket } from '@floodgate/core';
import { encodeIdentity, MAX_IDENTITY_BYTES } from '@floodgate/core/store';
import { expectTtls, type Harness } from './harness.js';

const LONG = 'x'.repeat(100_000);

/**
 * Identities that break naive key layouts: hash-tag braces, separators, our own escape and
 * hash markers, control characters, emoji, lone surrogates (which a UTF-8 encoder would all turn
 * into U+FFFD), and 100 kB strings that must be hashed yet stay distinct.
 */
export const ADVERSARIAL_IDENTITIES: readonly string[] = [
  '{',
  '}',
  '{}',
  '}{',
  '{{',
  ':',
  '::',
  'a:b',
  'a}:{b',
  '{a}',
  'x}:tb:1:86400000:1',
  '\n',
  '\r\n',
  'a\nb',
  '%',
  '%%',
  '%25',
  '%7B',
  '%7D',
  '%23',
  '%u',
  '%uD800',
  '#',
  '#x',
  ' ',
  '\t',
  '\0',
  'a\0',
  'a',
  'A',
  'é',
  'e\u0301',
  '😀',
  '👍🏽',
  '\uD83D',
  '\uDE00',
  '\uDE00\uD83D',
  '\uD83D\uD83D',
  '\uD800',
  '\uDFFF',
  '\uFFFD',
  '\uD800\uDC00',
  'a\uD800',
  'a\uDFFF',
  'a\uFFFD',
  LONG,
  `${LONG}y`,
  `y${LONG}`,
  `${LONG}\uD800`,
  `${LONG}\uDFFF`,
  'x'.repeat(MAX_IDENTITY_BYTES),
  'x'.repeat(MAX_IDENTITY_BYTES + 1),
  '{'.repeat(50_000),
  encodeIdentity(LONG),
];

const short = (id: string): string =>
  JSON.stringify(id.length > 24 ? `${id.slice(0, 12)}…(${id.length})` : id);

export function registerIdentities(h: Harness): void {
  h.api.describe('identities and prefixes stay independent', () => {
    h.test('adversarial identities never share a key', async (run) => {
      const ids = ADVERSARIAL_IDENTITIES;
      h.expect(new Set(ids).size, 'the list has no duplicates').toBe(ids.length);
      const tb = tokenBucket({ limit: 1, interval: '1d' });
      const swl = slidingWindowLog({ limit: 2, window: '1d' });
      const l = run.limiter([tb, swl]);
      // A second identity landing on a used key would find its bucket spent.
      for (const id of ids) {
        const d = await l.limit(id);
        h.expect([d.allowed, d.remaining], `first call of ${short(id)}`).toEqual([true, 0]);
        await expectTtls(h, run, l, id, d);
      }
      for (const id of ids) {
        const p = await l.peek(id);
        h.expect(
          p.policies.map((x) => [x.allowed, x.remaining]),
          `${short(id)} was charged exactly once`,
        ).toEqual([
          [false, 0],
          [true, 1],
        ]);
      }
      const keys = await run.liveKeys();
      if (keys !== undefined) {
        const expected = ids.flatMap((id) => [run.key(id, tb), run.key(id, swl)]).sort();
        h.expect(keys, 'exactly one key per identity and policy').toEqual(expected);
        const bound = Buffer.byteLength(run.prefix) + MAX_IDENTITY_BYTES + 40;
        for (const k of keys) {
          h.expect(Buffer.byteLength(k, 'utf8'), `key size of ${short(k)}`).toBeLessThanOrEqual(
            bound,
          );
        }
      }
      for (const id of [LONG, '\uD800', '{']) await l.reset(id);
      for (const id of ids) {
        const reset = id === LONG || id === '\uD800' || id === '{';
        h.expect((await l.peek(id)).allowed, `after resetting three: ${short(id)}`).toBe(reset);
      }
    });

    h.test('prefixes and policies do not collide', async (run) => {
      const P = run.prefix;
      const tb = tokenBucket({ limit: 1, interval: '1d' });
      const pairs: [string, string][] = [
        [P, 'a:b'],
        [`${P}:a`, 'b'],
        [P, ':a'],
        [`${P}:`, 'a'],
        [`${P}::`, 'a'],
        [P, 'a'],
        [`${P}:a:`, 'b'],
        [P, 'a}:tb'],
        [`${P}%7B`, 'a'],
        [`${P}:%7Ba`, 'b'],
      ];
      for (const [prefix, id] of pairs) {
        const d = await run.limiter(tb, prefix).limit(id);
        h.expect(d.allowed, `first call of ${prefix} / ${id}`).toBe(true);
      }
      for (const [prefix, id] of pairs) {
        h.expect((await run.limiter(tb, prefix).peek(id)).allowed, `${prefix} / ${id} spent`).toBe(
          false,
        );
      }
      h.expect(new Set(pairs.map(([p, id]) => run.key(id, tb, p))).size, 'distinct keys').toBe(
        pairs.length,
      );

      // Policies of one kind, name and interval share state whatever their limits (the id is of
      // what is counted): a day of debt leaves nothing in a bucket that holds 9.6 hours. A name
      // given, another interval or another kind is a separate key.
      const a = tokenBucket({ limit: 2, interval: '1d' });
      const same = tokenBucket({ limit: 5, interval: 86_400_000, burst: 2 });
      await run.limiter(a).limit('s', { cost: 2 });
      h.expect(
        (await run.limiter(same).peek('s')).remaining,
        'same kind and interval, same state',
      ).toBe(0);
      const others = [
        tokenBucket({ limit: 2, interval: '1d', name: 'two' }),
        tokenBucket({ limit: 2, interval: '12h' }),
        fixedWindow({ limit: 2, window: '1d' }),
        slidingWindow({ limit: 2, window: '1d' }),
        slidingWindowLog({ limit: 2, window: '1d' }),
      ];
      for (const p of others) {
        h.expect((await run.limiter(p).peek('s')).remaining, `${p.id} is separate`).toBe(
          p.capacity,
        );
      }
    });
  });
}
