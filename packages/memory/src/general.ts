// The calls MemoryStore does not run on its in-place fast path: refunds, and the calls of
// policies with `blockFor` (their block keys). They go through core's reference composition
// (`evaluateAll`) on a copy of the entries' states, so this store and the reference (and the
// Lua, which mirrors it) agree by construction; calls without either never come here.
import { POLICY_TABLE } from '@floodgate/core/internal';
import {
  evaluateAll,
  type PolicyResult,
  type PolicyState,
  type StoreCall,
} from '@floodgate/core/store';
import { type Entry, splitKey, type Table } from './entries.js';
import type { EvictionClock } from './eviction.js';

// As entries.ts: a whole double is stored as a small integer, so no entry field gets boxed.
const small = (x: number): number => (x === (x | 0) ? x | 0 : x);

/** Where one key of the call lives, and its entry (undefined: none). */
interface Spot {
  readonly table: Table;
  readonly id: string;
  readonly entry: Entry | undefined;
}

/** The state an entry holds, absolute in time, as `evaluateAll` reads it. */
function stateOf(e: Entry, epoch: number, scalars: number): PolicyState {
  if (scalars === 0) return e.log ?? [];
  if (scalars === 2) return [e.s0 + epoch, e.s1];
  return scalars === 4 && e.s3 !== 0
    ? [e.s0 + epoch, e.s1, e.s2, e.s3]
    : [e.s0 + epoch, e.s1, e.s2];
}

function write(e: Entry, state: PolicyState, log: boolean, epoch: number, expiresAt: number): void {
  if (log) e.log = state.slice();
  else {
    e.s0 = small(state[0]! - epoch);
    e.s1 = small(state[1] ?? 0);
    e.s2 = small(state[2] ?? 0);
    e.s3 = small(state[3] ?? 0);
    e.log = undefined;
  }
  e.expiresAt = small(expiresAt);
}

/**
 * One call through `evaluateAll`: keys 0..n-1 are the policies', the rest block keys (state
 * `[until]`, kept in `s0` like a window start). `table` finds or makes a table by name.
 * `overrides`: the states of the call's override keys (its last keys, `StoreCall.overrides`),
 * which live apart from the tables (overrides.ts) and are never written here.
 */
export function evaluateGeneral(
  call: StoreCall,
  table: (name: string) => Table,
  eviction: EvictionClock,
  epoch: number,
  now: number,
  overrides?: readonly (PolicyState | undefined)[],
): PolicyResult[] {
  const keys = call.keys;
  const n = call.policies.length;
  const spots: Spot[] = [];
  const states: (PolicyState | undefined)[] = [];
  const own = keys.length - (overrides?.length ?? 0);
  for (let i = 0; i < own; i++) {
    const [name, id] = splitKey(keys[i]!);
    const t = table(name);
    const e = t.get(id);
    spots.push({ table: t, id, entry: e });
    const live = e !== undefined && e.expiresAt > now - epoch;
    if (!live) {
      states.push(undefined);
      continue;
    }
    e.used = true;
    states.push(stateOf(e, epoch, i < n ? POLICY_TABLE[call.policies[i]!.kind].scalars : 1));
  }
  if (overrides !== undefined) states.push(...overrides);
  const { results, writes } = evaluateAll(call, states, now);
  const isLog = (i: number) => i < n && POLICY_TABLE[call.policies[i]!.kind].scalars === 0;
  // Entries it holds first, as evaluateSync does: an insert's sweep must not take one of them.
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i];
    const s = spots[i]!;
    if (w === null) eviction.remove(s.table, s.id);
    else if (w !== undefined && s.entry !== undefined) {
      write(s.entry, w.state, isLog(i), epoch, now - epoch + w.ttlMs);
    }
  }
  for (let i = 0; i < writes.length; i++) {
    const w = writes[i];
    const s = spots[i]!;
    if (w === null || w === undefined || s.entry !== undefined) continue;
    const e = eviction.insert(s.table, s.id, now - epoch);
    write(e, w.state, isLog(i), epoch, now - epoch + w.ttlMs);
  }
  return results;
}
