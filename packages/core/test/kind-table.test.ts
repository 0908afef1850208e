// The kind table is what the reference, MemoryStore and the Lua assembly read a kind from: each
// row must agree with its kind's Lua fragment and with what its kernel does.
import { describe, expect, it } from 'vitest';
import {
  fixedWindow,
  leakyBucket,
  type Policy,
  type PolicyKind,
  quota,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { LUA_SOURCES } from '../src/lua.generated.js';
import { POLICY_KINDS } from '../src/policies/kinds.js';
import { POLICY_TABLE } from '../src/policies/table.js';
import { evaluatePolicy } from '../src/store.js';

// One policy per kind: a new kind without a sample here does not compile.
const SAMPLES: { readonly [K in PolicyKind]: Policy } = {
  fixedWindow: fixedWindow({ limit: 3, window: '1s' }),
  slidingWindow: slidingWindow({ limit: 3, window: '1s' }),
  slidingWindowLog: slidingWindowLog({ limit: 3, window: '1s' }),
  tokenBucket: tokenBucket({ limit: 3, interval: '1s' }),
  leakyBucket: leakyBucket({ limit: 3, interval: '1s', queue: 2 }),
  quota: quota({ limit: 3, per: 'day', timeZone: 'Europe/Berlin' }),
};

/** The `@params` names of a kind's fragment, following its `@use`. */
function luaParams(name: string): string[] {
  let source = LUA_SOURCES[name]!;
  const use = /\n-- @use (\w+)/.exec(source);
  if (use !== null) source = LUA_SOURCES[use[1]!]!;
  return /\n-- @params ([\w ]+)/.exec(source)![1]!.trim().split(/\s+/);
}

describe('the kind table', () => {
  it('has one row per kind, filed under its own name, with a tag no other kind uses', () => {
    expect(Object.keys(POLICY_TABLE).sort()).toEqual([...POLICY_KINDS].sort());
    for (const kind of POLICY_KINDS) expect(POLICY_TABLE[kind].kind).toBe(kind);
    const tags = POLICY_KINDS.map((k) => POLICY_TABLE[k].tag);
    expect(new Set(tags).size).toBe(tags.length);
    for (const kind of POLICY_KINDS) {
      expect(SAMPLES[kind].id.startsWith(`${POLICY_TABLE[kind].tag}:`)).toBe(true);
    }
  });

  it("names each kind's Lua fragment, and counts the parameters that fragment reads", () => {
    for (const kind of POLICY_KINDS) {
      const row = POLICY_TABLE[kind];
      expect(LUA_SOURCES[row.lua], kind).toBeTypeOf('string');
      expect(luaParams(row.lua).length, kind).toBe(row.params + (row.perCall?.args ?? 0));
      expect(SAMPLES[kind].params.length).toBeGreaterThanOrEqual(row.params);
    }
  });

  it('says which kinds shape: only they tell an admitted request to wait', () => {
    for (const kind of POLICY_KINDS) {
      const policy = SAMPLES[kind];
      const first = evaluatePolicy(policy, undefined, 1_000, 1);
      const second = evaluatePolicy(policy, first.next, 1_000, 1);
      expect(second.allowed, kind).toBe(true);
      expect(second.delayMs > 0, kind).toBe(POLICY_TABLE[kind].shaping);
    }
  });

  it('gives the width of the state its kernel writes (0: a log of triples)', () => {
    for (const kind of POLICY_KINDS) {
      const policy = SAMPLES[kind];
      const first = evaluatePolicy(policy, undefined, 1_000, 1);
      const second = evaluatePolicy(policy, first.next, 1_001, 1);
      const { scalars } = POLICY_TABLE[kind];
      if (scalars === 0) expect(second.next).toEqual([1_000, 0, 1, 1_001, 1, 1]);
      // A token bucket's fourth number is written only where its burst is not its limit.
      else expect(second.next, kind).toHaveLength(Math.min(scalars, 3));
    }
    const burst = tokenBucket({ limit: 10, interval: '1s', burst: 25 });
    expect(evaluatePolicy(burst, undefined, 1_000, 1).next).toEqual([1_100, 0, 1, 2_500]);
  });
});
