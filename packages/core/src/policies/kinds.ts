import type { Policy } from '../types.js';
import type { PolicyState, Verdict } from './common.js';
import type { PolicyKind } from './kind-names.js';

// The list itself lives in kind-names.ts, which imports nothing: types.ts reads `PolicyKind`
// there without reading the rows below, which name `Policy`.
export { POLICY_KINDS, type PolicyKind } from './kind-names.js';

/**
 * A kind's arithmetic, one signature for every kind so a store calls it through the kind table
 * without a switch: the policy's first three `params`, the state (`has` false: empty; scalar kinds
 * read `s0`..`s2`, slidingWindowLog reads `log`), the time in ms and the cost, then a token
 * bucket's fourth parameter and the fourth number of its state (`p3`, `s3`: its fill time at its
 * limit and the writer's fill time, token_bucket.ts `fillShift`; the other kinds leave them out).
 * It writes its verdict into `v` and allocates nothing but a new log.
 * @example
 * One decision on an empty state, through the table as MemoryStore makes it.
 * ```ts
 * import { fixedWindow } from '@floodgate/core';
 * import { type Kernel, newVerdict, POLICY_TABLE } from '@floodgate/core/internal';
 *
 * const policy = fixedWindow({ limit: 10, window: '1m' });
 * const kernel: Kernel = POLICY_TABLE[policy.kind].kernel;
 * const [a, b, c] = policy.params;
 * const v = newVerdict();
 * kernel(a, b, c, false, 0, 0, 0, undefined, 90_000, 1, v);
 * console.log(v.allowed, v.n0, v.n1); // true 60000 1
 * ```
 * @internal
 */
export type Kernel = (
  p0: number,
  p1: number,
  p2: number,
  has: boolean,
  s0: number,
  s1: number,
  s2: number,
  log: PolicyState | undefined,
  t: number,
  cost: number,
  v: Verdict,
  p3?: number,
  s3?: number,
) => void;

/**
 * A kind's refund, the reference its fragment's `@refund` mirrors: the policy's three `params`,
 * its stored state (never empty: an empty state has nothing to give back), the time in ms and the
 * units to give back. Returns the state to write with its TTL, `null` to delete the key (the
 * state is empty again), or `undefined` to leave it (nothing of the current window to give back).
 * @example
 * Giving back 2 of 3 units counted in the current fixed window.
 * ```ts
 * import { fixedWindow } from '@floodgate/core';
 * import { POLICY_TABLE, type RefundKernel } from '@floodgate/core/internal';
 *
 * const [limit, windowMs, unused] = fixedWindow({ limit: 10, window: '1m' }).params;
 * const refund: RefundKernel = POLICY_TABLE.fixedWindow.refund;
 * console.log(refund(limit, windowMs, unused, [60_000, 3], 90_000, 2)); // { state: [60000, 1], ttlMs: 30000 }
 * ```
 * @internal
 */
export type RefundKernel = (
  p0: number,
  p1: number,
  p2: number,
  state: PolicyState,
  t: number,
  cost: number,
) => { state: PolicyState; ttlMs: number } | null | undefined;

/**
 * Everything the stores need to know of one kind, written once beside its kernel
 * (`<file>.ts`) and gathered by kind in `POLICY_TABLE`.
 * @example
 * The Redis side reads a kind's fragment and its share of `ARGV` from its row.
 * ```ts
 * import { POLICY_TABLE, type PolicyKindRow } from '@floodgate/core/internal';
 *
 * const row: PolicyKindRow = POLICY_TABLE.leakyBucket;
 * console.log(row.tag, row.lua, row.params, row.shaping); // 'lb' 'leaky_bucket' 3 true
 * ```
 * @internal
 */
export interface PolicyKindRow<K extends PolicyKind = PolicyKind> {
  /** The kind the row is filed under in `POLICY_TABLE`. */
  readonly kind: K;
  /** The few characters naming the kind in a Redis key (`<prefix>:{<identity>}:<tag>:<hash>`). */
  readonly tag: string;
  /** Its Lua fragment: `LUA_SOURCES[lua]`, the file `src/policies/<lua>.lua`. */
  readonly lua: string;
  /** How many of `Policy.params` the kernel and the fragment read (the fragment's `@params`). */
  readonly params: number;
  /** Whether an admitted request may be told to wait (`delayMs`): the fragment's SHAPING. */
  readonly shaping: boolean;
  /** How many numbers the stored state holds (`PolicyState`); 0: a log of any length. */
  readonly scalars: 0 | 2 | 3 | 4;
  /**
   * How many of `params` an override state stores (`[until, limit, ...params]`), when fewer
   * than `params`: the rest follow from the override's limit (a token bucket's fill time at its
   * limit, `p3`, is `limit × p1`), so override states keep the width 1.0 wrote.
   */
  readonly overrideParams?: number;
  /**
   * Its arithmetic, the reference the fragment mirrors. A kind with `perCall` parameters takes
   * them resolved in its kernel's `p1`, `p2`: run it through `perCall.kernelFor(policy)`.
   */
  readonly kernel: Kernel;
  /** Its refund (`limiter.refund`), the reference the fragment's `@refund` mirrors. */
  readonly refund: RefundKernel;
  /** Parameters that depend on when the call is decided (quota's period); absent for the rest. */
  readonly perCall?: PerCallParams;
}

/**
 * The parameters of a kind that depend on the time of the call, not only on the policy: a
 * quota's period boundaries, which follow the calendar. The Redis side sends them in each call's
 * `ARGV` after the row's `params` (computed at the host's clock; the script picks by its own
 * time); an in-process store runs `kernelFor(policy)`, which resolves them at the time it is
 * given. Kinds without it keep their cached, static `ARGV` and their plain kernel.
 * @example
 * The quota's three period ends as a call sends them.
 * ```ts
 * import { quota } from '@floodgate/core';
 * import { POLICY_TABLE } from '@floodgate/core/internal';
 *
 * const policy = quota({ limit: 1000, per: 'day', timeZone: 'Europe/Berlin' });
 * const argv: string[] = [];
 * POLICY_TABLE.quota.perCall!.write(policy, Date.now(), argv, 0);
 * console.log(argv); // [start of today, its end, the end of tomorrow], in ms
 * ```
 * @internal
 */
export interface PerCallParams {
  /** `ARGV` entries the fragment reads after the row's `params` (the rest of its `@params`). */
  readonly args: number;
  /** Writes them into `target` from `at`, as decimal strings, for a call expected at `nowMs`. */
  write(policy: Policy, nowMs: number, target: string[], at: number): void;
  /** The kind's kernel for `policy`, resolving these parameters at the `t` it is given. */
  kernelFor(policy: Policy): Kernel;
  /** The kind's refund for `policy` (`PolicyKindRow.refund`), resolved the same way. */
  refundFor(policy: Policy): RefundKernel;
}
