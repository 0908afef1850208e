// MemoryStore's building blocks: the entry, the tables, running a kernel on an entry, key parsing.
import type { Policy } from '@floodgate/core';
import { type Kernel, POLICY_TABLE, type Verdict } from '@floodgate/core/internal';
import type { PolicyResult } from '@floodgate/core/store';

/**
 * One key's state, updated in place; an expired entry is reused when its identity returns. Its
 * times (`s0`, the window start or bucket time, and `expiresAt`) count ms from the store's epoch
 * (its clock at its first decision): small integers for weeks, which V8 keeps inside the entry,
 * where a timestamp is a boxed double, one more memory load per decision.
 */
export class Entry {
  s0 = 0;
  s1 = 0;
  s2 = 0;
  /** A token bucket's writer's fill time, where it is not its limit's (core's fillShift). */
  s3 = 0;
  log: number[] | undefined = undefined;
  expiresAt = 0;
  /** Read since it last came up for eviction: it gets a second chance (CLOCK). */
  used = false;
  // Its place in the store's eviction order (eviction.ts), a list through the entries themselves:
  // the sweep finds the oldest entry and its table without iterating a Map.
  prev: Entry | undefined = undefined;
  next: Entry | undefined = undefined;

  constructor(
    readonly id: string,
    readonly table: Table | undefined,
  ) {}

  // V8 forgets a hidden class once no object of it is alive, and throws away the optimized code
  // that checks it: when the last store went, the next store's hot path went back to the
  // interpreter at the next full GC. This entry lives as long as the module.
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held, never read (see above)
  static readonly #alive = new Entry('', undefined);
}

/**
 * How long an entry stays after it expired before a sweep may take it. A caller whose clock is
 * behind the one that saw it expire (an injected `now`, skewed callers) must still find it, as a
 * key read lazily would be found: time never runs backward for a key.
 */
export const SWEEP_GRACE_MS = 60_000;

/** The state of one policy under one prefix, by encoded identity. */
export type Table = Map<string, Entry>;

/**
 * A policy's kernel (from core's kind table, looked up once per limiter) and parameters, copied
 * out of `Policy.params`: that array is frozen, and V8 (Node 20) compiles an element load from a
 * frozen array to a generic inline-cache call, which costs more than the policy's arithmetic.
 */
export interface Spec {
  readonly kernel: Kernel;
  readonly a: number;
  readonly b: number;
  readonly c: number;
  /** A token bucket's fill time at its limit (`params[3]`); 0 for every other kind. */
  readonly d: number;
}

export function specOf(p: Policy): Spec {
  const q = p.params;
  const row = POLICY_TABLE[p.kind];
  // A quota's kernel resolves its period at the store's clock (core's `PerCallParams`).
  const kernel = row.perCall === undefined ? row.kernel : row.perCall.kernelFor(p);
  return { kernel, a: q[0], b: q[1], c: q[2], d: q[3] ?? 0 };
}

/** What a limiter's policies array resolves to, once: tables (for `prefix`) and specs. */
export interface Resolved {
  readonly prefix: string | undefined;
  /** Some policy has `blockFor`, or shadowed policies sit beside enforced ones: its calls go
   * through general.ts, not the fast path. */
  readonly blocking: boolean;
  readonly tables: Table[];
  readonly specs: Spec[];
}

export const mutableResult = (): { -readonly [K in keyof PolicyResult]: PolicyResult[K] } => ({
  allowed: false,
  remaining: 0,
  resetAfterMs: 0,
  retryAfterMs: 0,
  delayMs: 0,
});

type MutableResult = ReturnType<typeof mutableResult>;

// `x` itself, but typed as a small integer when it is one: the difference of two doubles is a
// double to V8 even when whole, and one double stored in a field boxes that field in every entry.
const small = (x: number): number => (x === (x | 0) ? x | 0 : x);

/** Writes an admitted verdict's next state into its entry; `epoch` as in `Entry`. */
export function commit(e: Entry, v: Verdict, epoch: number, now: number): void {
  // The log kind leaves the scalars of the verdict as another kind last set them.
  if (v.log === undefined) {
    e.s0 = small(v.n0 - epoch);
    e.s1 = small(v.n1);
    e.s2 = small(v.n2);
    e.s3 = small(v.n3);
  }
  e.log = v.log;
  e.expiresAt = small(now - epoch + v.nextResetAfterMs);
}

/** What the caller sees of a verdict: after the charge when `charged`, as it stood otherwise. */
export function report(r: MutableResult, v: Verdict, charged: boolean, peek: boolean): void {
  if (charged) {
    r.allowed = true;
    r.remaining = v.nextRemaining;
    r.resetAfterMs = v.nextResetAfterMs;
    r.retryAfterMs = 0;
    r.delayMs = v.delayMs;
  } else {
    r.allowed = v.allowed;
    r.remaining = v.remaining;
    r.resetAfterMs = v.resetAfterMs;
    r.retryAfterMs = v.retryAfterMs;
    r.delayMs = peek ? v.delayMs : 0;
  }
  v.log = undefined; // the verdict is scratch, reused by the next call
}

/** Runs the policy's kernel on an entry's state (`live` false: empty state) into `v`. */
export function decide(
  p: Spec,
  live: boolean,
  e: Entry | undefined,
  epoch: number,
  now: number,
  cost: number,
  v: Verdict,
): void {
  if (live) {
    p.kernel(p.a, p.b, p.c, true, e!.s0 + epoch, e!.s1, e!.s2, e!.log, now, cost, v, p.d, e!.s3);
  } else p.kernel(p.a, p.b, p.c, false, 0, 0, 0, undefined, now, cost, v, p.d, 0);
}

/** `<prefix>:{<identity>}:<policy id>` → table name `<prefix>{<policy id>` and identity. */
export function splitKey(key: string): [string, string] {
  const open = key.indexOf('{');
  const close = key.lastIndexOf('}');
  if (open < 1 || close < open || key[close + 1] !== ':') return [key, ''];
  return [`${key.slice(0, open - 1)}{${key.slice(close + 2)}`, key.slice(open + 1, close)];
}
