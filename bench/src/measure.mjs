import { config } from './config.mjs';

// Timing loops and the interleaved, repeated comparison. Every contender gets the same loop, the
// same identities and the same iteration count; only `decide` differs.

/** Runs a full GC when node was started with --expose-gc (the bench script does), so garbage
 * left by the previous contender is not collected on the next one's clock. */
export function collectGarbage() {
  if (typeof globalThis.gc === 'function') globalThis.gc();
}

// A denial is a value for Floodgate ({ allowed: false }) and a rejection with a RateLimiterRes
// (which carries msBeforeNext) for rate-limiter-flexible. Anything else thrown is a real error.
function isDenial(error) {
  return typeof error === 'object' && error !== null && 'msBeforeNext' in error;
}

/**
 * One decision in flight at a time: `iterations` awaited calls over `keys`, round-robin.
 * `decide` returns the library's own promise, so no wrapper sits between the loop and it.
 * @returns {Promise<{ ns: bigint, denied: number }>}
 */
export async function sequential(decide, keys, iterations) {
  const n = keys.length;
  let denied = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < iterations; i++) {
    try {
      const r = await decide(keys[i % n]);
      if (r.allowed === false) denied++;
    } catch (error) {
      if (!isDenial(error)) throw error;
      denied++;
    }
  }
  return { ns: process.hrtime.bigint() - start, denied };
}

/**
 * `inFlight` workers, each awaiting one decision at a time, sharing `iterations` decisions over
 * `keys` round-robin: at most `inFlight` decisions are outstanding at any moment.
 * @returns {Promise<{ ns: bigint, denied: number }>}
 */
export async function concurrent(decide, keys, iterations, inFlight) {
  const n = keys.length;
  let next = 0;
  let denied = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= iterations) return;
      try {
        const r = await decide(keys[i % n]);
        if (r.allowed === false) denied++;
      } catch (error) {
        if (!isDenial(error)) throw error;
        denied++;
      }
    }
  };
  const start = process.hrtime.bigint();
  await Promise.all(Array.from({ length: Math.min(inFlight, iterations) }, worker));
  return { ns: process.hrtime.bigint() - start, denied };
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Measures every contender `repeats` times, interleaved: in repeat r the order is rotated by r,
 * so each contender runs early and late in turn and a slow drift of the machine (thermal, other
 * load) does not favour one. Each run builds a fresh instance (`setup`), then `run` warms it up
 * and times it. `warmupRounds` untimed rounds of every contender come first (config.mjs says why).
 * @param {{ name: string, setup: () => Promise<{ decide: (key: string) => Promise<unknown>, teardown?: () => unknown }> }[]} contenders
 * @param {number} repeats
 * @param {(decide: (key: string) => Promise<unknown>) => Promise<{ ns: bigint, denied: number, iterations: number }>} run
 * @param {(denied: number, iterations: number) => boolean} expectDenied which denial counts are right
 * @param {Map<string, object[]>} [runs] filled with each run's whole result, by contender name
 * @returns {Promise<Map<string, number[]>>} ops/s of each run, by contender name
 */
export async function compare(contenders, repeats, run, expectDenied, runs) {
  for (let r = 0; r < config.warmupRounds; r++) {
    for (const c of contenders) {
      const instance = await c.setup();
      await run(instance.decide);
      await instance.teardown?.();
    }
  }
  const samples = new Map(contenders.map((c) => [c.name, []]));
  for (let r = 0; r < repeats; r++) {
    for (let j = 0; j < contenders.length; j++) {
      const c = contenders[(j + r) % contenders.length];
      const instance = await c.setup();
      const result = await run(instance.decide);
      const { ns, denied, iterations } = result;
      if (runs !== undefined) runs.set(c.name, [...(runs.get(c.name) ?? []), result]);
      await instance.teardown?.();
      if (!expectDenied(denied, iterations)) {
        throw new Error(
          `${c.name}: ${denied} of ${iterations} decisions denied, which this scenario does not ` +
            'expect: the contenders would not be measuring the same path',
        );
      }
      samples.get(c.name).push(iterations / (Number(ns) / 1e9));
    }
  }
  return samples;
}

/** Median ops/s and the half-range of the runs, e.g. `1,234,567 ±2%`. */
export function formatOps(samples) {
  const m = median(samples);
  const half = ((Math.max(...samples) - Math.min(...samples)) / 2 / m) * 100;
  return `${Math.round(m).toLocaleString('en-US')} ±${half < 1 ? half.toFixed(1) : Math.round(half)}%`;
}

export function formatRatio(ours, theirs) {
  return `${(median(ours) / median(theirs)).toFixed(2)}×`;
}

/** A Markdown table, padded so it also reads well in a terminal. */
export function table(headers, rows, align) {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const cell = (text, i) =>
    align[i] === 'r' ? String(text).padStart(widths[i]) : String(text).padEnd(widths[i]);
  const line = (cells) => `| ${cells.map(cell).join(' | ')} |`;
  const rule = `|${widths.map((w, i) => (align[i] === 'r' ? `${'-'.repeat(w + 1)}:` : '-'.repeat(w + 2))).join('|')}|`;
  return [line(headers), rule, ...rows.map(line)].join('\n');
}
