/**
 * `@floodgate/core/slices`: one hot identity served past what one store can decide for it. Each
 * process leases a slice of the identity's quota from the store (one admission of `cost + size`
 * units) and answers the next requests from it in-process, with no round trip, until the slice
 * is spent or old. Opt-in: it trades a bounded over-admission and stale headers for throughput
 * (the bound is in docs/algorithms.md, "Slices").
 * @module
 */
import { LRUCache } from 'lru-cache';
import { combined } from './binding.js';
import { FloodgateError } from './errors.js';
import type { Limiter } from './limiter-types.js';
import { checkSliceOptions, maxAgeOf, type SliceOptions, sliceCostOf } from './slices-options.js';
import type { Decision, PolicyDecision } from './types.js';

export type { SliceOptions };

/** Kinds whose `resetAfterMs` is the end of the window the units were charged in. */
const WINDOWED = new Set(['fixedWindow', 'quota']);

/** What one process holds for one identity. */
class Slot {
  /** Units of the live slice not yet served. */
  left = 0;
  /** Local time (performance.now) the slice ends. */
  until = 0;
  /** Local time the lease was sent: ages the lease's figures. */
  taken = 0;
  /** The lease's decision, for the figures served decisions carry. */
  lease: Decision | undefined;
  /** Units the store said remained after its last decision for the identity here. */
  known = 0;
  /**
   * This process's demand: units asked since `since` (local time), and units asked per
   * `maxAgeMs` over the period before. A slice holds no more than that: what will be asked
   * before it lapses.
   */
  units = 0;
  since = 0;
  prev = 0;
  /** The lease in flight: callers meanwhile wait for it instead of each leasing. */
  pending: Promise<unknown> | undefined;
}

/**
 * Wraps a limiter so that each process serves one identity's requests from slices of its quota.
 * `limit()` takes a slice (`cost` + up to `size` units, one store call) when the process holds none with
 * room, and answers from it in-process until it is spent, `maxAgeMs` old, or its fixed window
 * ended. A slice holds at most what this process was asked for the identity in the last
 * `maxAgeMs` (a cold identity gets none). Near the limit the slices shrink (at most half of what the store last said remained),
 * and when none fits, every request is decided by the store alone, exactly as without slices: a
 * denial is always the store's, with its tight `retryAfterMs`. `peek`, `reset`, `refund` and
 * `wait` go to the store as before (`reset` also drops this process's slice; other processes'
 * lapse within `maxAgeMs`).
 *
 * Bad options throw `INVALID_OPTION`; a limiter with a `leakyBucket` (whose admissions carry a
 * delay a slice cannot hand out) is refused. A shadow limiter is returned as it is.
 * @example
 * ```ts
 * import { createLimiter, fixedWindow } from '@floodgate/core';
 * import { withSlices } from '@floodgate/core/slices';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = withSlices(
 *   createLimiter({ store: new MemoryStore(), policy: fixedWindow({ limit: 100_000, window: '1m' }) }),
 *   { size: 200 },
 * );
 * const d = await limiter.limit('tenant_1'); // decided by the store; once the key is hot, slices of up to 200
 * ```
 * @beta
 */
export function withSlices(limiter: Limiter, options: SliceOptions): Limiter {
  checkSliceOptions(limiter, options);
  if (limiter.shadow === true) return limiter;
  // A slice is charged as one lease: a shadowed policy that would refuse the lease (and not the
  // request) would send the request back to the store, charging the enforced policies twice.
  if (limiter.policies.some((p) => p.shadow === true)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'withSlices: a limiter that shadows some of its policies cannot be sliced (shadow all or none)',
    );
  }
  const policies = limiter.policies;
  const size = options.size;
  const shortest = Math.min(...policies.map((p) => p.windowMs));
  const maxAgeMs =
    options.maxAgeMs === undefined
      ? Math.max(1, Math.min(1000, Math.floor(shortest / 10)))
      : maxAgeOf(options.maxAgeMs);
  const capacity = Math.min(...policies.map((p) => p.capacity));
  const windowed = policies.map((p) => WINDOWED.has(p.kind));
  const slots = new LRUCache<string, Slot>({ max: options.maxIdentities ?? 10_000 });

  /** The slice's end: `maxAgeMs` after the lease, and never past a fixed window it was charged in. */
  function endOf(d: Decision, sent: number): number {
    let end = sent + maxAgeMs;
    for (let i = 0; i < windowed.length; i++) {
      // `sent` precedes the store's decision, so this end is no later than the window's, but
      // for 1 ms: the store reads its clock in whole ms (Redis TIME, Date.now), so the
      // `resetAfterMs` it counts from that truncated instant can be up to 1 ms long.
      if (windowed[i]) end = Math.min(end, sent + d.policies[i]!.resetAfterMs - 1);
    }
    return end;
  }

  async function exact(identity: string, cost: number, slot: Slot): Promise<Decision> {
    const d = await limiter.limit(identity, { cost });
    slot.known = d.remaining;
    return d;
  }

  async function lease(
    identity: string,
    cost: number,
    slot: Slot,
    extra: number,
  ): Promise<Decision> {
    const sent = performance.now();
    const d = await limiter.limit(identity, { cost: cost + extra });
    if (d.allowed && d.reason === undefined && d.shadowDenied === undefined) {
      slot.known = d.remaining;
      slot.lease = d;
      slot.taken = sent;
      slot.left = extra;
      slot.until = endOf(d, sent);
      return served(slot, performance.now());
    }
    // A fallback store's admission (the store is down): answered as it is, no slice kept.
    if (d.allowed && d.shadowDenied === undefined) return d;
    // The slice did not fit (or a shadowed policy would have refused it, which charged nothing):
    // the request alone is the store's to decide, and so is its denial.
    slot.known = d.remaining;
    return exact(identity, cost, slot);
  }

  /**
   * Takes a slice, or decides alone when none would fit; callers meanwhile wait for the slice.
   * A slice is sized to this process's demand (the units asked here in the last `maxAgeMs`, or
   * so far in this one, besides this request): one sized to `size` alone would strand most of
   * its units at a moderate rate, every `maxAgeMs`, and a cold identity (a request now and then)
   * gets none.
   */
  function take(identity: string, cost: number, slot: Slot): Promise<Decision> {
    const demand = Math.max(slot.prev, slot.units - cost);
    const extra = Math.min(
      size,
      capacity - cost,
      Math.floor((slot.known - cost) / 2),
      Math.floor(demand),
    );
    if (extra < 1) return exact(identity, cost, slot);
    const p = lease(identity, cost, slot, extra);
    const pending = p.then(
      () => {
        if (slot.pending === pending) slot.pending = undefined;
      },
      () => {
        if (slot.pending === pending) slot.pending = undefined;
      },
    );
    slot.pending = pending;
    return p;
  }

  function limit(identity: string, cost: number, slot = slots.get(identity)): Promise<Decision> {
    if (slot !== undefined) {
      if (slot.left >= cost) {
        const now = performance.now();
        if (now < slot.until) {
          slot.left -= cost;
          return Promise.resolve(served(slot, now));
        }
        slot.left = 0;
      }
      if (slot.pending !== undefined) {
        const again = (): Promise<Decision> => limit(identity, cost);
        return slot.pending.then(again, again);
      }
      return take(identity, cost, slot);
    }
    const fresh = new Slot();
    fresh.since = performance.now();
    fresh.units = cost;
    const p = exact(identity, cost, fresh);
    // Kept once the store has answered: an identity the limiter refused (not a string, or empty) leaves nothing here.
    return p.then((d) => {
      if (!slots.has(identity)) slots.set(identity, fresh);
      return d;
    });
  }

  /** Counts a request into its identity's demand (not a caller's retry after waiting on a lease). */
  function count(slot: Slot, cost: number): void {
    const now = performance.now();
    const elapsed = now - slot.since;
    if (elapsed >= maxAgeMs) {
      // Per maxAgeMs: a period long past (an identity back after an hour) counts for little.
      slot.prev = (slot.units * maxAgeMs) / elapsed;
      slot.units = 0;
      slot.since = now;
    }
    slot.units += cost;
  }

  return {
    policies,
    shadow: limiter.shadow,
    limit(identity, opts) {
      // Per-policy costs are decided by the store itself: a slice holds units of one cost.
      if (typeof opts?.cost === 'object') return limiter.limit(identity, opts);
      try {
        const cost = sliceCostOf(opts as { cost?: number } | undefined, capacity);
        const slot = slots.get(identity);
        if (slot !== undefined) count(slot, cost);
        return limit(identity, cost, slot);
      } catch (error) {
        return Promise.reject(error);
      }
    },
    peek: (identity) => limiter.peek(identity),
    wait: (identity, opts) => limiter.wait(identity, opts),
    // A reservation is settled on the store: it is charged there, never from a slice.
    ...(limiter.reserve === undefined
      ? {}
      : { reserve: limiter.reserve.bind(limiter) as NonNullable<Limiter['reserve']> }),
    refund: (identity, opts) => limiter.refund(identity, opts),
    reset(identity) {
      slots.delete(identity);
      return limiter.reset(identity);
    },
  };
}

/**
 * A decision answered from the slice: the lease's figures, aged by the local clock, with the
 * units still held here counted as remaining (the store counted them as charged).
 */
function served(slot: Slot, now: number): Decision {
  const d = slot.lease!;
  const age = Math.floor(now - slot.taken);
  const parts = d.policies;
  const n = parts.length;
  const out = new Array<PolicyDecision>(n);
  const b = parts.indexOf(d.binding);
  let resetAfterMs = 0;
  for (let i = 0; i < n; i++) {
    const p = parts[i]!;
    const q: PolicyDecision = {
      name: p.name,
      kind: p.kind,
      limit: p.limit,
      windowMs: p.windowMs,
      allowed: true,
      remaining: p.remaining + slot.left,
      resetAfterMs: Math.max(0, p.resetAfterMs - age),
      retryAfterMs: 0,
      delayMs: 0,
    };
    out[i] = q;
    if (q.resetAfterMs > resetAfterMs) resetAfterMs = q.resetAfterMs;
  }
  return combined(true, out[Math.max(b, 0)]!, resetAfterMs, 0, 0, out);
}
