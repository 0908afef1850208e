import { ceilDiv, floorDiv } from '../math.js';
import type { Policy } from '../types.js';

/**
 * A policy's stored state, as integers (the Lua scripts store the same numbers):
 * fixedWindow `[windowStart, count]`; slidingWindow `[windowStart, current, previous]`;
 * tokenBucket and leakyBucket `[tatMs, tatTicks]` (theoretical arrival time, ms plus a fraction
 * in ticks); slidingWindowLog `[ms1, before1, cost1, ms2, …]`, oldest first
 * (see slidingWindowLog below).
 */
export type PolicyState = readonly number[];

/** What one policy says about one request. Pure data; the reference the Lua scripts match. */
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

function outcome(
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

// A caller whose clock is behind the key's state (clock: 'client', skewed hosts) is evaluated at
// the key's time: time never runs backward for a key, so skew cannot reopen a spent window.
// The durations it gets back still count from its own clock (`shift` = key's time − caller's):
// its retry and reset waits include the difference, and so does the TTL the store sets on its
// clock. Counted from the key's time instead, the key would expire before its state is empty,
// and the store would forget usage it must still count.
function late(o: PolicyOutcome, shift: number): PolicyOutcome {
  if (shift === 0) return o;
  if (o.resetAfterMs > 0) o.resetAfterMs += shift;
  if (!o.allowed) o.retryAfterMs += shift;
  // A bucket evaluated at its key's time is full: it never admits, so no delay needs shifting.
  if (o.next !== undefined) o.nextResetAfterMs += shift;
  return o;
}

function fixedWindow(
  limit: number,
  w: number,
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const now = s !== undefined && s[0]! > t ? s[0]! : t;
  const shift = now - t;
  const start = now - (now % w);
  const count = s !== undefined && s[0] === start ? s[1]! : 0;
  const end = start + w - now;
  const reset = count > 0 ? end : 0;
  if (count + cost > limit) {
    return late(outcome(false, limit - count, reset, end, 0, undefined, 0, 0), shift);
  }
  return late(
    outcome(true, limit - count, reset, 0, 0, [start, count + cost], limit - count - cost, end),
    shift,
  );
}

function slidingWindow(
  limit: number,
  w: number,
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const now = s !== undefined && s[0]! > t ? s[0]! : t;
  const shift = now - t;
  const start = now - (now % w);
  const elapsed = now - start;
  let cur = 0;
  let prev = 0;
  if (s !== undefined) {
    if (s[0] === start) {
      cur = s[1]!;
      prev = s[2]!;
    } else if (s[0] === start - w) {
      prev = s[1]!;
    }
  }
  // Integer form of prev × (w − elapsed)/w + cur + cost ≤ limit.
  const weighted = prev * (w - elapsed);
  const remaining = Math.max(0, floorDiv(limit * w - weighted, w) - cur);
  const reset = cur > 0 ? start + 2 * w - now : prev > 0 ? start + w - now : 0;
  if (weighted + (cur + cost) * w <= limit * w) {
    const next = [start, cur + cost, prev];
    return late(
      outcome(true, remaining, reset, 0, 0, next, remaining - cost, start + 2 * w - now),
      shift,
    );
  }
  let retry: number;
  if (cur + cost <= limit) {
    // Later in this window the previous window's weight has shrunk enough.
    retry = w - elapsed - floorDiv((limit - cur - cost) * w, prev);
  } else {
    // Only once this window has become the previous one, and its weight has shrunk enough.
    const into = cur > 0 ? Math.max(0, w - floorDiv((limit - cost) * w, cur)) : 0;
    retry = w - elapsed + into;
  }
  return late(outcome(false, remaining, reset, retry, 0, undefined, 0, 0), shift);
}

// Entries are triples [ms, before, cost]: `before` is the units admitted (by this key) before the
// entry, so the units of entries i..j are before(j) + cost(j) − before(i): counting the window
// takes two lookups, never a sum over the log. Entries are sorted by ms; one ms holds one entry.
function slidingWindowLog(
  limit: number,
  w: number,
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const n = s === undefined ? 0 : s.length;
  const newest = n > 0 ? s![n - 3]! : 0;
  const now = n > 0 && newest > t ? newest : t;
  const shift = now - t;
  // The first entry in (now − w, now], by binary search (Lua: ZRANGEBYSCORE … LIMIT 0 1).
  let lo = 0;
  let hi = n / 3;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (s![mid * 3]! <= now - w) lo = mid + 1;
    else hi = mid;
  }
  const first = lo * 3;
  const total = n > 0 ? s![n - 2]! + s![n - 1]! : 0;
  const count = first < n ? total - s![first + 1]! : 0;
  const reset = count > 0 ? newest + w - now : 0;
  if (count + cost > limit) {
    // The entry holding the k-th oldest unit must leave the window first.
    const target = s![first + 1]! + count + cost - limit;
    lo = first / 3;
    hi = n / 3 - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (s![mid * 3 + 1]! + s![mid * 3 + 2]! >= target) hi = mid;
      else lo = mid + 1;
    }
    return late(
      outcome(false, limit - count, reset, s![lo * 3]! + w - now, 0, undefined, 0, 0),
      shift,
    );
  }
  const next = s === undefined ? [] : s.slice(first);
  if (count > 0 && newest === now) next[next.length - 1] = next[next.length - 1]! + cost;
  else next.push(now, total, cost);
  return late(outcome(true, limit - count, reset, 0, 0, next, limit - count - cost, w), shift);
}

function bucket(
  shaping: boolean,
  p: Policy['params'],
  s: PolicyState | undefined,
  t: number,
  cost: number,
): PolicyOutcome {
  const [capacity, perUnit, perMs] = p;
  const tau = capacity * perUnit;
  let now = t;
  let ahead = 0; // ticks the theoretical arrival time is ahead of now
  if (s !== undefined) {
    const maxAheadMs = ceilDiv(tau, perMs);
    if (s[0]! - now > maxAheadMs) now = s[0]! - maxAheadMs;
    ahead = Math.max(0, (s[0]! - now) * perMs + s[1]!);
  }
  const shift = now - t;
  const remaining = Math.max(0, floorDiv(tau - ahead, perUnit));
  const reset = ceilDiv(ahead, perMs);
  const after = ahead + cost * perUnit;
  if (after > tau) {
    const retry = ceilDiv(after - tau, perMs);
    return late(outcome(false, remaining, reset, retry, 0, undefined, 0, 0), shift);
  }
  const whole = floorDiv(after, perMs);
  const next = [now + whole, after - whole * perMs];
  const delay = shaping ? reset : 0;
  return late(
    outcome(true, remaining, reset, 0, delay, next, remaining - cost, ceilDiv(after, perMs)),
    shift,
  );
}

/**
 * The reference algorithm: one policy, its current state (undefined = empty), the time in integer
 * ms and the cost. Deterministic and allocation-light; MemoryStore runs it, the Lua scripts mirror it.
 */
export function evaluatePolicy(
  policy: Policy,
  state: PolicyState | undefined,
  now: number,
  cost: number,
): PolicyOutcome {
  const p = policy.params;
  switch (policy.kind) {
    case 'fixedWindow':
      return fixedWindow(p[0], p[1], state, now, cost);
    case 'slidingWindow':
      return slidingWindow(p[0], p[1], state, now, cost);
    case 'slidingWindowLog':
      return slidingWindowLog(p[0], p[1], state, now, cost);
    case 'tokenBucket':
      return bucket(false, p, state, now, cost);
    case 'leakyBucket':
      return bucket(true, p, state, now, cost);
  }
}
