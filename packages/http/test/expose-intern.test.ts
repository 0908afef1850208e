// Outcomes share interned, frozen lists of the names to expose; merging them must give what the
// general merge gives, whatever the names.
import { createLimiter, fixedWindow } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import { createEngine, mergeExposeHeaders } from '../src/adapter/index.js';
import type { RateLimitRequest } from '../src/index.js';
import { exposeNamesOf, joinedNames } from '../src/shared/expose.js';
import { steadyMemoryStore } from './support/stores.js';

const view = (key: string): RateLimitRequest => ({
  method: 'GET',
  path: '/',
  route: undefined,
  address: '127.0.0.1',
  header: (name) => (name === 'x-key' ? key : undefined),
  raw: {},
});

const engineOf = (limit: number) =>
  createEngine({
    limiter: createLimiter({
      store: steadyMemoryStore(),
      policy: fixedWindow({ name: 'api', limit, window: '1m' }),
    }),
    key: (request) => request.header('x-key'),
  });

/** The general merge, by hand: what the interned fast path must agree with. */
function slowMerge(existing: string | undefined, names: readonly string[]): string {
  const current = (existing ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  for (const name of names) {
    if (!current.some((c) => c.toLowerCase() === name.toLowerCase())) current.push(name);
  }
  return current.join(', ');
}

describe('interned expose lists', () => {
  test('two decisions with the same headers share one frozen list; pushing onto it throws', async () => {
    const engine = engineOf(100);
    const a = await engine.decide(view('a'));
    const b = await engine.decide(view('b'));
    expect(a.expose).toEqual(['RateLimit', 'RateLimit-Policy']);
    expect(b.expose).toBe(a.expose);
    expect(Object.isFrozen(a.expose)).toBe(true);
    expect(() => (a.expose as string[]).push('X-Other')).toThrow(TypeError);
    // The shared list is unchanged for the next request.
    expect((await engine.decide(view('c'))).expose).toEqual(['RateLimit', 'RateLimit-Policy']);
  });

  test("a denial's list has its own names (Retry-After too), not the admitted one's", async () => {
    const engine = engineOf(1);
    const ok = await engine.decide(view('d'));
    const denied = await engine.decide(view('d'));
    expect(denied.action).toBe('respond');
    expect(denied.expose).toEqual(['RateLimit', 'RateLimit-Policy', 'Retry-After']);
    expect(denied.expose).not.toBe(ok.expose);
    // Content-Type is added to the 429's headers after the names were taken.
    expect(denied.headers['Content-Type']).toBe('application/problem+json');
  });

  test('the same names in another order are another list', () => {
    const ab = exposeNamesOf({ A: '1', B: '2' });
    const ba = exposeNamesOf({ B: '2', A: '1' });
    expect(ab).toEqual(['A', 'B']);
    expect(ba).toEqual(['B', 'A']);
    expect(exposeNamesOf({ A: 'x', B: 'y' })).toBe(ab);
    expect(exposeNamesOf({ A: 'x' })).toEqual(['A']);
    expect(exposeNamesOf({ A: 'x', B: 'y', C: 'z' })).toEqual(['A', 'B', 'C']);
  });

  test('past the table size, lists are still right and frozen', () => {
    for (let i = 0; i < 20; i++) {
      const headers = { [`X-${i}`]: '1', [`Y-${i}`]: '2' };
      const names = exposeNamesOf(headers);
      expect(names).toEqual([`X-${i}`, `Y-${i}`]);
      expect(Object.isFrozen(names)).toBe(true);
      expect(joinedNames(names)).toBe(`X-${i}, Y-${i}`);
    }
  });

  test('merging an interned list agrees with the general merge, plain names or not', () => {
    const lists = [
      exposeNamesOf({ RateLimit: '', 'RateLimit-Policy': '' }),
      exposeNamesOf({ ratelimit: '', RateLimit: '' }),
      exposeNamesOf({ 'A,B': '', C: '' }),
      exposeNamesOf({ ' Padded': '', Q: '' }),
      exposeNamesOf({}),
    ];
    const existing = [
      undefined,
      '',
      'RateLimit, RateLimit-Policy',
      'X-Request-Id',
      'ratelimit',
      '*',
      ' , C ,',
    ];
    for (const names of lists) {
      for (const e of existing) {
        expect(mergeExposeHeaders(e, names), `${String(e)} + ${names.join('|')}`).toBe(
          slowMerge(e, names),
        );
      }
    }
  });
});
