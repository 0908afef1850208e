// MemoryStore's overrides (`OverrideStore`, `limiter.override`): one state per override key,
// `[until, limit, ...params]` as core's reference reads it, held like the policies' state in one
// map per (prefix, policy) by encoded identity, so a decision finds its identity's override
// without building a key string. Apart from the policy tables: not counted in `maxKeys` and never
// evicted (an override is the app's decision, not a count: evicting a block under memory
// pressure would lift it), so they are as many as the app sets. Each goes at its until: dropped
// when read after it, and swept when they have doubled since the last sweep (amortized O(1) per
// write), so overrides nobody reads again do not pile up.
import type { Policy } from '@floodgate/core';
import type { Verdict } from '@floodgate/core/internal';
import type { PolicyResult, PolicyState, StoreCall } from '@floodgate/core/store';
import {
  commit,
  decide,
  mutableResult,
  report,
  type Spec,
  splitKey,
  type Table,
} from './entries.js';
import type { EvictionClock } from './eviction.js';

export class OverrideTable {
  /** By table name (`<prefix>{<policy id>:ovr`, as `splitKey` names it), then by identity. */
  readonly #tables = new Map<string, Map<string, PolicyState>>();
  #size = 0;
  #sweepAt = 64;
  readonly #names = new WeakMap<readonly Policy[], { prefix: string; names: string[] }>();

  get size(): number {
    return this.#size;
  }

  #set(key: string, state: PolicyState | undefined): void {
    const [name, id] = splitKey(key);
    let table = this.#tables.get(name);
    if (state === undefined) {
      if (table?.delete(id) === true) this.#size--;
      return;
    }
    if (table === undefined) {
      table = new Map();
      this.#tables.set(name, table);
    }
    if (!table.has(id)) this.#size++;
    table.set(id, state);
  }

  write(keys: readonly string[], states: readonly (PolicyState | null)[], now: number): void {
    keys.forEach((key, i) => {
      const s = states[i];
      this.#set(key, s === null || s === undefined || !(s[0]! > now) ? undefined : s.slice());
    });
    if (this.#size >= this.#sweepAt) {
      for (const table of this.#tables.values()) {
        for (const [id, s] of table) {
          if (s[0]! > now) continue;
          table.delete(id);
          this.#size--;
        }
      }
      this.#sweepAt = Math.max(64, this.#size * 2);
    }
  }

  #get(name: string, id: string, now: number): PolicyState | undefined {
    const table = this.#tables.get(name);
    const s = table?.get(id);
    if (s === undefined || s[0]! > now) return s;
    table!.delete(id);
    this.#size--;
    return undefined;
  }

  read(key: string, now: number): PolicyState | undefined {
    const [name, id] = splitKey(key);
    return this.#get(name, id, now);
  }

  delete(key: string): void {
    this.#set(key, undefined);
  }

  /** The override tables of a limiter's policies under `prefix`, named once per limiter. */
  #namesOf(policies: readonly Policy[], prefix: string): string[] {
    let r = this.#names.get(policies);
    if (r === undefined || r.prefix !== prefix) {
      r = { prefix, names: policies.map((p) => `${prefix}{${p.id}:ovr`) };
      this.#names.set(policies, r);
    }
    return r.names;
  }

  /**
   * The states of a call's override keys (`StoreCall.overrides`) when one is in force, else
   * undefined: a call with none takes the store's fast path, and while the store holds no
   * override at all nothing is looked up.
   */
  inForce(call: StoreCall, now: number): (PolicyState | undefined)[] | undefined {
    if (this.#size === 0) return undefined;
    const n = call.policies.length;
    const out: (PolicyState | undefined)[] = [];
    let any = false;
    const id = call.identity;
    if (id !== undefined && call.prefix !== undefined) {
      const names = this.#namesOf(call.policies, call.prefix);
      for (let i = 0; i < n; i++) out.push(this.#get(names[i]!, id, now));
    } else {
      const keys = call.keys;
      for (let i = keys.length - n; i < keys.length; i++) out.push(this.read(keys[i]!, now));
    }
    for (const s of out) if (s !== undefined) any = true;
    return any ? out : undefined;
  }
}

/** An override state's spec and reported override, made once per state (a state is never changed). */
interface Ran {
  readonly spec: Spec;
  readonly override: { readonly limit: number; readonly until: number };
}
const ran = new WeakMap<PolicyState, Ran>();

function ranOf(o: PolicyState, spec: Spec): Ran {
  let r = ran.get(o);
  if (r === undefined || (o[1] === 0 && r.spec !== spec)) {
    // A block runs on the policy's own parameters; a raise or a cut on the override's.
    const run =
      o[1] === 0
        ? spec
        : {
            kernel: spec.kernel,
            a: o[2] ?? spec.a,
            b: o[3] ?? spec.b,
            c: o[4] ?? spec.c,
            // A token bucket's fill time at its limit follows the override's limit.
            d: spec.d === 0 ? 0 : o[1]! * (o[3] ?? spec.b),
          };
    r = { spec: run, override: { limit: o[1]!, until: o[0]! } };
    ran.set(o, r);
  }
  return r;
}

/**
 * One policy (no `blockFor`, not a refund) with its override in force: the fast path's steps on
 * the override's parameters, or a block, as core's `evaluateAll` decides it (the conformance
 * suite's traces hold the two to each other).
 */
export function decideOverridden(
  table: Table,
  id: string,
  spec: Spec,
  o: PolicyState,
  eviction: EvictionClock,
  epoch: number,
  now: number,
  call: StoreCall,
  v: Verdict,
): PolicyResult[] {
  const e = table.get(id);
  const live = e !== undefined && e.expiresAt > now - epoch;
  if (live) e.used = true;
  const peek = call.mode === 'peek';
  const left = o[1] === 0 ? o[0]! - now : 0;
  const { spec: run, override } = ranOf(o, spec);
  decide(run, live, e, epoch, now, peek ? 1 : call.cost, v);
  const charge = v.allowed && !peek && left === 0;
  if (charge) commit(e ?? eviction.insert(table, id, now - epoch), v, epoch, now);
  const r = scratch;
  report(r, v, charge, peek);
  if (left > 0) {
    return [
      {
        allowed: false,
        remaining: 0,
        resetAfterMs: Math.max(r.resetAfterMs, left),
        retryAfterMs: Math.max(r.retryAfterMs, left),
        delayMs: 0,
        override,
      },
    ];
  }
  const { allowed, remaining, resetAfterMs, retryAfterMs, delayMs } = r;
  return [{ allowed, remaining, resetAfterMs, retryAfterMs, delayMs, override }];
}

const scratch = mutableResult();
