// Shared by every policy, operation for operation with common.lua: every value stays a safe
// integer, so TypeScript and Lua doubles agree bit for bit.

/**
 * A policy's stored state, as integers: fixedWindow `[windowStart, count]`; slidingWindow
 * `[windowStart, current, previous]`; tokenBucket and leakyBucket `[tatMs, tatTicks, ticksPerMs]`
 * (theoretical arrival time, ms plus a fraction in ticks of the rate that wrote it); slidingWindowLog
 * `[ms1, before1, cost1, ms2, …]`, oldest first. Redis holds the same numbers (see each `.lua`).
 * @example
 * Keeping one policy's state between calls to the reference algorithm.
 * ```ts
 * import { fixedWindow } from '@floodgate/core';
 * import { evaluatePolicy, type PolicyState } from '@floodgate/core/store';
 *
 * const policy = fixedWindow({ limit: 2, window: '1s' });
 * let state: PolicyState | undefined; // undefined: empty
 * for (const now of [0, 10, 20]) {
 *   const o = evaluatePolicy(policy, state, now, 1);
 *   if (o.allowed) state = o.next;
 * }
 * ```
 * @public
 */
export type PolicyState = readonly number[];

/**
 * What one policy says about one request. Pure data; the reference the Lua scripts match.
 * @example
 * ```ts
 * import { tokenBucket } from '@floodgate/core';
 * import { evaluatePolicy, type PolicyOutcome } from '@floodgate/core/store';
 *
 * const policy = tokenBucket({ limit: 10, interval: '1s' });
 * const o: PolicyOutcome = evaluatePolicy(policy, undefined, Date.now(), 3);
 * console.log(o.allowed, o.nextRemaining); // true 7
 * ```
 * @public
 */
export interface PolicyOutcome {
  allowed: boolean;
  /** Units admissible now, before this request is charged. */
  remaining: number;
  /** Time until the current state is empty, before this request is charged. */
  resetAfterMs: number;
  /** 0 when allowed; otherwise the tight wait after which the request alone is admitted. */
  retryAfterMs: number;
  /** leakyBucket: the wait before an admitted request proceeds. */
  delayMs: number;
  /** When allowed: the state after charging, its remaining units and its time to empty (= TTL). */
  next: PolicyState | undefined;
  nextRemaining: number;
  nextResetAfterMs: number;
}

/** floor(a / b) for safe integers, b > 0, exact even where a / b rounds up to an integer. */
export function floorDiv(a: number, b: number): number {
  let q = Math.floor(a / b);
  if (q * b > a) q -= 1;
  else if ((q + 1) * b <= a) q += 1;
  return q;
}

/** ceil(a / b) for safe integers, b > 0. */
export function ceilDiv(a: number, b: number): number {
  return -floorDiv(-a, b);
}

export function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}

/**
 * A policy's verdict, written in place by a kernel (`fixedWindowKernel`, …) so a store can reuse
 * one per policy instead of allocating per call. Fields mean what `PolicyOutcome`'s do; the
 * state after charging is `n0`, `n1`, `n2` (scalar kinds) or `log` (slidingWindowLog).
 * @example
 * A verdict reused across calls, as an in-process store keeps one per policy.
 * ```ts
 * import { fixedWindow } from '@floodgate/core';
 * import { fixedWindowKernel, newVerdict, type Verdict } from '@floodgate/core/internal';
 *
 * const [limit, windowMs, unused] = fixedWindow({ limit: 10, window: '1m' }).params;
 * const v: Verdict = newVerdict();
 * fixedWindowKernel(limit, windowMs, unused, false, 0, 0, 0, undefined, Date.now(), 1, v);
 * if (v.allowed) console.log(`state [${v.n0}, ${v.n1}], ${v.nextRemaining} left`);
 * ```
 * @internal
 */
export interface Verdict {
  allowed: boolean;
  remaining: number;
  resetAfterMs: number;
  retryAfterMs: number;
  delayMs: number;
  nextRemaining: number;
  nextResetAfterMs: number;
  n0: number;
  n1: number;
  n2: number;
  /** tokenBucket's fill time (`s3`) when it is not its limit's (token_bucket.ts); else 0. */
  n3: number;
  log: number[] | undefined;
  /**
   * Input, not output: admit whatever the capacity says, and write the state the charge makes
   * (a reservation settled above its estimate: debt). The Lua fragments read `force`.
   */
  force: boolean;
}

/**
 * A blank `Verdict` for a kernel to write into; allocate one per policy and reuse it.
 * @example
 * ```ts
 * import { newVerdict, slidingWindowLogKernel } from '@floodgate/core/internal';
 *
 * const v = newVerdict();
 * slidingWindowLogKernel(100, 60_000, 0, false, 0, 0, 0, undefined, Date.now(), 1, v);
 * console.log(v.allowed, v.log); // true, the new log
 * ```
 * @internal
 */
export function newVerdict(): Verdict {
  return {
    allowed: false,
    remaining: 0,
    resetAfterMs: 0,
    retryAfterMs: 0,
    delayMs: 0,
    nextRemaining: 0,
    nextResetAfterMs: 0,
    n0: 0,
    n1: 0,
    n2: 0,
    n3: 0,
    log: undefined,
    force: false,
  };
}

// A caller whose clock is behind the key's state (clock: 'client', skewed hosts) is evaluated at
// the key's time: time never runs backward for a key, so skew cannot reopen a spent window.
// The durations it gets back still count from its own clock (`shift` = key's time − caller's):
// its retry and reset waits include the difference, and so does the TTL the store sets on its
// clock. Counted from the key's time instead, the key would expire before its state is empty,
// and the store would forget usage it must still count. A bucket evaluated at its key's time is
// full: it never admits, so no delay needs shifting.

/** Sets a denial; durations are from the key's time, `shift` adds the caller's lag. */
export function deny(
  v: Verdict,
  remaining: number,
  reset: number,
  retry: number,
  shift: number,
): void {
  v.allowed = false;
  v.remaining = remaining;
  v.resetAfterMs = reset > 0 ? reset + shift : reset;
  v.retryAfterMs = retry + shift;
  v.delayMs = 0;
}

/** Sets an admission; the next state is left to the kernel. */
export function admit(
  v: Verdict,
  remaining: number,
  reset: number,
  delay: number,
  nextRemaining: number,
  nextReset: number,
  shift: number,
): void {
  v.allowed = true;
  v.remaining = remaining;
  v.resetAfterMs = reset > 0 ? reset + shift : reset;
  v.retryAfterMs = 0;
  v.delayMs = delay;
  v.nextRemaining = nextRemaining;
  v.nextResetAfterMs = nextReset + shift;
}

/** The array form of a verdict: what `evaluatePolicy` returns. */
export function toOutcome(v: Verdict, scalars: number): PolicyOutcome {
  let next: PolicyState | undefined;
  if (v.allowed) {
    next =
      v.log ??
      (scalars === 2
        ? [v.n0, v.n1]
        : scalars === 4 && v.n3 !== 0
          ? [v.n0, v.n1, v.n2, v.n3]
          : [v.n0, v.n1, v.n2]);
  }
  return outcome(
    v.allowed,
    v.remaining,
    v.resetAfterMs,
    v.retryAfterMs,
    v.delayMs,
    next,
    v.allowed ? v.nextRemaining : 0,
    v.allowed ? v.nextResetAfterMs : 0,
  );
}

export function outcome(
  allowed: boolean,
  remaining: number,
  resetAfterMs: number,
  retryAfterMs: number,
  delayMs: number,
  next: PolicyState | undefined,
  nextRemaining: number,
  nextResetAfterMs: number,
): PolicyOutcome {
  return {
    allowed,
    remaining,
    resetAfterMs,
    retryAfterMs,
    delayMs,
    next,
    nextRemaining,
    nextResetAfterMs,
  };
}
