// The value codec: every state comes back exactly (bit for bit, -0 and fractions included), a
// full slidingWindowLog fits Deno KV's 64 KiB, and a value that cannot fit is refused before
// any write.
import { isFloodgateError, slidingWindowLog } from '@floodgate/core';
import { evaluatePolicy, MAX_LOG_LIMIT } from '@floodgate/core/store';
import { describe, expect, it } from 'vitest';
import {
  decodeLeases,
  decodeState,
  encodeLeases,
  encodeState,
  expiryOf,
  type HeldLease,
  MAX_VALUE_BYTES,
} from '../src/codec.js';

const NOW = 1_700_000_000_000;

describe('state values', () => {
  it('round-trips any array of doubles exactly', () => {
    // Random bit patterns (NaNs, infinities, subnormals, -0), small and large integers, and
    // fractions, mixed: every element must come back as the same double.
    let seed = 0x2545f491;
    const random = () => {
      seed ^= seed << 13;
      seed ^= seed >>> 17;
      seed ^= seed << 5;
      return (seed >>> 0) / 2 ** 32;
    };
    const view = new DataView(new ArrayBuffer(8));
    const one = (): number => {
      const pick = random();
      if (pick < 0.3) return Math.floor((random() - 0.5) * 2 ** (1 + Math.floor(random() * 53)));
      if (pick < 0.5) return (random() - 0.5) * 10 ** Math.floor(random() * 20);
      view.setUint32(0, Math.floor(random() * 2 ** 32));
      view.setUint32(4, Math.floor(random() * 2 ** 32));
      return view.getFloat64(0);
    };
    for (let run = 0; run < 2_000; run++) {
      const state = Array.from({ length: Math.floor(random() * 40) }, one);
      const back = decodeState(encodeState(state, NOW + 1 + run), NOW);
      expect(back).toHaveLength(state.length);
      back!.forEach((x, i) => {
        expect(Object.is(x, state[i]), `${x} vs ${state[i]}`).toBe(true);
      });
    }
  });

  it('round-trips integers near the edges of the delta range', () => {
    const state = [0, -0, 2 ** 50, -(2 ** 50), 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 1.5, NOW, 7];
    const back = decodeState(encodeState(state, NOW + 1), NOW)!;
    state.forEach((x, i) => {
      expect(Object.is(back[i], x), `element ${i}`).toBe(true);
    });
  });

  it('is absent once its expiry is reached on the reader’s clock', () => {
    const bytes = encodeState([1, 2, 3], NOW + 10);
    expect(decodeState(bytes, NOW + 9)).toEqual([1, 2, 3]);
    expect(decodeState(bytes, NOW + 10)).toBe(undefined);
    expect(expiryOf(bytes)).toBe(NOW + 10);
    expect(decodeState(null, NOW)).toBe(undefined);
  });

  it('a slidingWindowLog at MAX_LOG_LIMIT fits one value', () => {
    // The largest log: MAX_LOG_LIMIT entries of cost 1 ([ms, units before, cost] triples),
    // spread evenly over a 30-day window.
    const window = 30 * 86_400_000;
    const state: number[] = [];
    for (let i = 0; i < MAX_LOG_LIMIT; i++) {
      state.push(NOW + Math.floor((i * window) / MAX_LOG_LIMIT), i, 1);
    }
    // The reference reads it as a full log: the next request is denied.
    const policy = slidingWindowLog({ limit: MAX_LOG_LIMIT, window });
    const end = NOW + window - 1;
    expect(evaluatePolicy(policy, state, end, 1).allowed).toBe(false);
    const bytes = encodeState(state, NOW + window);
    expect(bytes.length).toBeLessThanOrEqual(MAX_VALUE_BYTES);
    expect(decodeState(bytes, NOW)).toEqual(state);
  });

  it('refuses a value above 64 KiB with STORE_UNAVAILABLE', () => {
    const huge = Array.from({ length: 10_000 }, (_, i) => i + 0.5); // 9 bytes each
    let error: unknown;
    try {
      encodeState(huge, NOW + 1);
    } catch (e) {
      error = e;
    }
    expect(isFloodgateError(error) && error.code).toBe('STORE_UNAVAILABLE');
  });

  it('reads anything but Floodgate bytes as STORE_PROTOCOL', () => {
    for (const value of ['text', 42, { a: 1 }, new Uint8Array([9, 9]), new Uint8Array([1])]) {
      let error: unknown;
      try {
        decodeState(value, NOW);
      } catch (e) {
        error = e;
      }
      expect(isFloodgateError(error) && error.code, String(value)).toBe('STORE_PROTOCOL');
    }
  });
});

describe('lease tables', () => {
  it('round-trip ids of any shape, and drop the expired', () => {
    const leases: HeldLease[] = [
      { id: '0123456789abcdef0123456789abcdef', cost: 1, expiresAt: NOW + 5 },
      { id: 'a1', cost: 3, expiresAt: NOW + 30_000 },
      { id: 'ÅB{}:\u0000😀', cost: 2 ** 40, expiresAt: NOW + 1 },
      { id: '0123456789ABCDEF0123456789ABCDEF', cost: 7, expiresAt: NOW + 2 },
    ];
    const bytes = encodeLeases(leases);
    expect(expiryOf(bytes)).toBe(NOW + 30_000);
    expect(decodeLeases(bytes, NOW)).toEqual(leases);
    expect(decodeLeases(bytes, NOW + 2)).toEqual([leases[0], leases[1]]);
    expect(decodeLeases(bytes, NOW + 30_000)).toEqual([]);
  });

  it('some 3 000 hex-id leases fit one value', () => {
    const many = Array.from({ length: 3_000 }, (_, i) => ({
      id: i.toString(16).padStart(32, '0'),
      cost: 1,
      expiresAt: NOW + 60_000 + i,
    }));
    expect(encodeLeases(many).length).toBeLessThanOrEqual(MAX_VALUE_BYTES);
    expect(() => encodeLeases([...many, ...many])).toThrow(/value limit/);
  });
});
