import { describe, expect, it } from 'vitest';
import { hashTagOf } from '../src/index.js';
import { type Contender, hash32, pick, seedOf } from '../src/rendezvous.js';

const ids = (n: number, from = 0): string[] =>
  Array.from({ length: n }, (_, i) => `user-${from + i}`);
const contenders = (names: string[], weights?: number[]): Contender[] =>
  names.map((n, i) => ({ seed: seedOf(n), weight: weights?.[i] ?? 1 }));
const shares = (list: string[], cs: Contender[], equal = true): number[] => {
  const counts = cs.map(() => 0);
  for (const id of list) counts[pick(id, cs, equal)]!++;
  return counts.map((c) => c / list.length);
};

describe('hashTagOf', () => {
  it('takes what sits between the first { and the next }', () => {
    expect(hashTagOf('api:{user-1}:tb')).toBe('user-1');
    expect(hashTagOf('a:b:{x%7By}:fw')).toBe('x%7By');
    expect(hashTagOf('{a}{b}')).toBe('a');
  });
  it('hashes the whole key without a tag, or with an empty one, as Redis Cluster does', () => {
    expect(hashTagOf('plain-key')).toBe('plain-key');
    expect(hashTagOf('x:{}:y')).toBe('x:{}:y');
    expect(hashTagOf('x:{open')).toBe('x:{open');
  });
});

describe('rendezvous hashing', () => {
  it('hash32 depends on the seed and on every code unit, odd lengths included', () => {
    expect(hash32('abc', 1)).not.toBe(hash32('abc', 2));
    expect(hash32('abc', 1)).not.toBe(hash32('abd', 1));
    expect(hash32('abc', 1)).not.toBe(hash32('abc\u0000', 1));
    expect(hash32('🙂', 7)).toBe(hash32('🙂', 7));
  });

  it('spreads identities evenly over equal shards', () => {
    for (const share of shares(ids(30_000), contenders(['a', 'b', 'c']))) {
      expect(Math.abs(share - 1 / 3)).toBeLessThan(0.02);
    }
  });

  it('weighted shards get shares in proportion to their weights', () => {
    const cs = contenders(['a', 'b', 'c'], [1, 2, 1]);
    const [a, b, c] = shares(ids(40_000), cs, false);
    expect(Math.abs(a! - 0.25)).toBeLessThan(0.02);
    expect(Math.abs(b! - 0.5)).toBeLessThan(0.02);
    expect(Math.abs(c! - 0.25)).toBeLessThan(0.02);
  });

  it('equal weights give the same winner by raw hash as by the weighted score', () => {
    const cs = contenders(['a', 'b', 'c', 'd'], [3, 3, 3, 3]);
    for (const id of ids(2000)) expect(pick(id, cs, true)).toBe(pick(id, cs, false));
  });

  it('adding a shard moves about 1/N, all of it to the new shard', () => {
    const before = contenders(['a', 'b', 'c']);
    const after = contenders(['a', 'b', 'c', 'd']);
    let moved = 0;
    for (const id of ids(20_000)) {
      const from = pick(id, before, true);
      const to = pick(id, after, true);
      if (from !== to) {
        moved++;
        expect(to).toBe(3);
      }
    }
    expect(Math.abs(moved / 20_000 - 0.25)).toBeLessThan(0.02);
  });

  it('removing a shard moves only its own identities', () => {
    const before = contenders(['a', 'b', 'c', 'd']);
    const after = contenders(['a', 'c', 'd']); // b removed from the middle: names, not positions
    const names = ['a', 'b', 'c', 'd'];
    const namesAfter = ['a', 'c', 'd'];
    for (const id of ids(5000)) {
      const from = names[pick(id, before, true)]!;
      const to = namesAfter[pick(id, after, true)]!;
      if (from !== 'b') expect(to).toBe(from);
    }
  });
});
