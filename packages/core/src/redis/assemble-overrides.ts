// The Lua a limit script holds for a limiter with `overrides` (assemble.ts calls it; compose.ts
// `evaluateAll` with override-state.ts is the reference). Scripts of limiters without overrides
// hold none of it: same keys, same commands, same text as before overrides existed.
// KEYS: after the policies' and block keys, one override key per policy. Each holds
// "<until> <limit> <param>…" (as many params as the kind reads), written by `writeOverrides`.
// One GET per key (the batch script turns it into a read of its cache, like any GET): in force
// while until > t, when its params replace the ARGV ones for its policy in @eval, @refund and
// @write; limit 0 blocks its policy until `until`, as a running block does (blk<n>). The table
// `ov` holds the overrides in force (false: none, and nothing is allocated), one local for all
// policies: a Lua function has 200 locals and a 16-policy script uses most of them.
import type { PolicyKind } from '../policies/kinds.js';
import type { Layout } from './assemble.js';

/** The reads of a call's override keys, after the prelude (`t` is known): sets `ov`. */
export function overrideReads(
  kinds: readonly PolicyKind[],
  paramCounts: readonly number[],
  firstKey: number,
  at: Layout,
): string[] {
  const out = ['local ov = false'];
  kinds.forEach((_, i) => {
    const names = ['u', 'l', ...Array.from({ length: paramCounts[i]! }, (_, j) => `p${j}`)];
    const pattern = `^${names.map(() => '(%d+)').join(' ')}$`;
    out.push(
      'do',
      `local v = redis.call('GET', ${at.key(firstKey + i)})`,
      'if v then',
      `local ${names.join(', ')} = string.match(v, '${pattern}')`,
      'if u and tonumber(u) > t then',
      'ov = ov or {}',
      `ov[${i + 1}] = { ${names.map((x) => `tonumber(${x})`).join(', ')} }`,
      'end',
      'end',
      'end',
    );
  });
  return out;
}

/**
 * After a fragment's `local <params> = …` line: the override's parameters instead, for the ones
 * the fragment uses (`used`: name and index among the kind's parameters), unless it blocks.
 */
export function overrideParams(
  policy: number,
  used: readonly (readonly [string, number])[],
  stored: number,
) {
  const n = policy + 1;
  const names = used.map(([p]) => p).join(', ');
  // A parameter past those the state stores follows from the override's limit: the buckets'
  // fill time at the limit, limit × ticks per unit (override-state.ts underOverride).
  const values = used.map(([, j]) => (j < stored ? `ovp[${j + 3}]` : 'ovp[2] * ovp[4]')).join(', ');
  return [`local ovp = ov and ov[${n}]`, `if ovp and ovp[2] > 0 then ${names} = ${values} end`];
}

/**
 * Blocks by override: every policy gets a `blk<n>` (the blocking ones have theirs already) and
 * a block in force raises it to the time left, so the script's block handling denies it.
 */
export function overrideBlocks(n: number, blocking: readonly boolean[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const k = i + 1;
    if (blocking[i] !== true) out.push(`local blk${k} = 0`);
    out.push(
      'do',
      `local o = ov and ov[${k}]`,
      `if o and o[2] == 0 and o[1] - t > blk${k} then blk${k} = o[1] - t end`,
      'end',
    );
  }
  return out;
}

/** A policy's reply fields after its five: the override's until and limit (0, 0: none). */
export function overrideFields(n: number): string {
  return `, ov and ov[${n}] and ov[${n}][1] or 0, ov and ov[${n}] and ov[${n}][2] or 0`;
}
