import { describe, expect, it } from 'vitest';
import { createPacer } from '../src/index.js';

// The pacer's arithmetic with a pinned clock; test/pacing.test.ts runs it against a real limiter.
const O = 'https://api.example';
const T = 1_000_000;
const h = (rateLimit: string): Headers => new Headers({ RateLimit: rateLimit });

describe('Pacer', () => {
  it('knows nothing at first: no wait', () => {
    expect(createPacer().reserve(O, T).waitMs).toBe(0);
  });

  it('spreads the remaining quota over the time to reset', () => {
    const pacer = createPacer();
    const first = pacer.reserve(O, T);
    pacer.observe(O, first.seq, h('"p";r=4;t=2'), T);
    // 4 left over 2 s: one every 500 ms.
    expect([1, 2, 3, 4].map(() => pacer.reserve(O, T).waitMs)).toEqual([500, 1000, 1500, 2000]);
  });

  it('requests sent after the response that reported the quota count against it', () => {
    const pacer = createPacer();
    const a = pacer.reserve(O, T);
    const b = pacer.reserve(O, T); // in flight when a's answer arrives
    expect(b.waitMs).toBe(0);
    pacer.observe(O, a.seq, h('"p";r=1;t=5'), T);
    // The one remaining unit is b's: the next request waits for the reset.
    expect(pacer.reserve(O, T).waitMs).toBe(5000);
  });

  it('an exhausted quota holds requests until its reset, then forgets it', () => {
    const pacer = createPacer();
    pacer.observe(O, pacer.reserve(O, T).seq, h('"p";r=0;t=3'), T);
    expect(pacer.reserve(O, T + 1000).waitMs).toBe(2000);
    expect(pacer.reserve(O, T + 3001).waitMs).toBe(0);
  });

  it('a wait beyond maxWaitMs is not reserved and does not push the next one back', () => {
    const pacer = createPacer();
    const headers = new Headers({ RateLimit: '"p";r=0;t=3', 'RateLimit-Policy': '"p";q=10;w=60' });
    pacer.observe(O, pacer.reserve(O, T).seq, headers, T);
    // Spent: the next send is one gap (60 s / 10) after the last one, past the 3 s reset.
    expect(pacer.reserve(O, T, 1000)).toEqual({ waitMs: 6000, seq: 0 });
    expect(pacer.reserve(O, T, 1000)).toEqual({ waitMs: 6000, seq: 0 });
    expect(pacer.reserve(O, T, 6000)).toEqual({ waitMs: 6000, seq: 2 });
    expect(pacer.reserve(O, T).waitMs).toBe(12_000);
  });

  it('keeps every policy it has seen, not just the latest', () => {
    const pacer = createPacer();
    const a = pacer.reserve(O, T);
    const b = pacer.reserve(O, T);
    pacer.observe(O, a.seq, h('"hour";r=2;t=3600'), T);
    // b's response names another policy as the binding one; "hour" still holds: b spent one of
    // its two units, so the last one is spread over the rest of the hour.
    pacer.observe(O, b.seq, h('"second";r=5;t=1'), T);
    expect(pacer.reserve(O, T).waitMs).toBe(3_600_000);
  });

  it('ignores a response overtaken by a later one', () => {
    const pacer = createPacer();
    const a = pacer.reserve(O, T);
    const b = pacer.reserve(O, T);
    pacer.observe(O, b.seq, h('"p";r=10;t=1'), T);
    pacer.observe(O, a.seq, h('"p";r=0;t=60'), T);
    expect(pacer.reserve(O, T).waitMs).toBeLessThan(1000);
  });

  it('keeps origins apart, and ignores responses without a quota', () => {
    const pacer = createPacer();
    pacer.observe(O, pacer.reserve(O, T).seq, h('"p";r=0;t=30'), T);
    pacer.observe('https://other', 1, new Headers({ 'Retry-After': '5' }), T);
    expect(pacer.reserve('https://other', T).waitMs).toBe(0);
    expect(pacer.reserve(O, T).waitMs).toBe(30_000);
  });
});
