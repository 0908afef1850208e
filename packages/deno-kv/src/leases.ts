// The lease steps (the concurrency limiter's store side) on one identity's lease table, with
// the semantics of core's lease script (core/src/redis/lease.ts) and MemoryStore's leases: a
// lease is live while its expiry is after now; a denial says when enough slots expire for its
// cost. Each step is pure: it gets the live leases and answers with the table to write, if any.
import type { LeaseGrant, LeaseRef, LeaseRequest } from '@floodgate/core/store';
import { encodeLeases, type HeldLease } from './codec.js';
import type { Write } from './transact.js';

/** The write that stores `leases` (a delete when none is left), living as long as the last. */
export function tableWrite(leases: readonly HeldLease[], now: number, marginMs: number): Write {
  if (leases.length === 0) return { at: 0, value: null, expireIn: 0 };
  let last = now;
  for (const l of leases) last = Math.max(last, l.expiresAt);
  return { at: 0, value: encodeLeases(leases), expireIn: last - now + marginMs };
}

export function acquire(
  live: HeldLease[],
  r: LeaseRequest,
  now: number,
): { grant: LeaseGrant; next?: HeldLease[] } {
  let held = 0;
  for (const l of live) held += l.cost;
  if (held + r.cost > r.limit) {
    // Slot by slot, as the script counts: the expiry that frees enough for `cost`.
    const byExpiry = [...live].sort((a, b) => a.expiresAt - b.expiresAt);
    let need = held + r.cost - r.limit;
    let at = now;
    for (const l of byExpiry) {
      at = l.expiresAt;
      need -= l.cost;
      if (need <= 0) break;
    }
    return {
      grant: { allowed: false, remaining: Math.max(r.limit - held, 0), retryAfterMs: at - now },
    };
  }
  const next = live.filter((l) => l.id !== r.id);
  next.push({ id: r.id, cost: r.cost, expiresAt: now + r.leaseMs });
  return { grant: { allowed: true, remaining: r.limit - held - r.cost, retryAfterMs: 0 }, next };
}

/** The table without the lease, or undefined when it holds no such live lease. */
export function release(live: HeldLease[], l: LeaseRef): HeldLease[] | undefined {
  const next = live.filter((x) => x.id !== l.id);
  return next.length === live.length ? undefined : next;
}

/** The table with the lease's expiry moved, or undefined when it holds no such live lease. */
export function extend(
  live: HeldLease[],
  l: LeaseRef,
  leaseMs: number,
  now: number,
): HeldLease[] | undefined {
  const lease = live.find((x) => x.id === l.id);
  if (lease === undefined) return undefined;
  lease.expiresAt = now + leaseMs;
  return live;
}
