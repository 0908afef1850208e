// MemoryStore's leases (the concurrency limiter's store side): the semantics of the Redis lease
// script (core/src/redis/lease.ts) on the store's clock. Per key, the live leases by id with
// their expiry and cost; a lease is live while its expiry is after now.
import { FloodgateError } from '@floodgate/core';
import type { LeaseGrant, LeaseRef, LeaseRequest } from '@floodgate/core/store';

interface Held {
  expiresAt: number;
  readonly cost: number;
}

/** One identity's leases and the slots they hold. */
interface Slots {
  readonly leases: Map<string, Held>;
  held: number;
}

// Keys looked at per call for expired leases: memory follows live leases even for identities
// that never come back, with no timer.
const SWEEP_PER_CALL = 2;

export class LeaseTable {
  readonly #keys = new Map<string, Slots>();
  readonly #now: () => number;
  #sweep: Iterator<[string, Slots]> | undefined;

  constructor(now: () => number) {
    this.#now = now;
  }

  /** Runs one step at the clock's now, checked as evaluate checks it; failures reject. */
  run<T>(step: (now: number) => T): Promise<T> {
    try {
      const now = this.#now();
      if (!Number.isSafeInteger(now) || now < 0) {
        throw new FloodgateError(
          'INVALID_OPTION',
          `MemoryStore: now() must return non-negative integer ms, got ${now}`,
        );
      }
      return Promise.resolve(step(now));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Drops the key's expired leases; the key itself once it holds none. */
  #trim(key: string, slots: Slots, now: number): void {
    for (const [id, lease] of slots.leases) {
      if (lease.expiresAt > now) continue;
      slots.leases.delete(id);
      slots.held -= lease.cost;
    }
    if (slots.leases.size === 0) this.#keys.delete(key);
  }

  #live(key: string, now: number): Slots | undefined {
    this.#sweepSome(key, now);
    const slots = this.#keys.get(key);
    if (slots !== undefined) this.#trim(key, slots, now);
    return slots !== undefined && slots.leases.size > 0 ? slots : undefined;
  }

  #sweepSome(except: string, now: number): void {
    for (let i = 0; i < SWEEP_PER_CALL; i++) {
      this.#sweep ??= this.#keys.entries();
      const next = this.#sweep.next();
      if (next.done === true) {
        this.#sweep = undefined;
        return;
      }
      const [key, slots] = next.value;
      if (key !== except) this.#trim(key, slots, now);
    }
  }

  acquire(r: LeaseRequest, now: number): LeaseGrant {
    let slots = this.#live(r.key, now);
    const held = slots?.held ?? 0;
    if (held + r.cost > r.limit) {
      // As the script: the expiry that frees enough slots for cost, counting slot by slot.
      const expiries = [...slots!.leases.values()].sort((a, b) => a.expiresAt - b.expiresAt);
      let need = held + r.cost - r.limit;
      let at = now;
      for (const lease of expiries) {
        at = lease.expiresAt;
        need -= lease.cost;
        if (need <= 0) break;
      }
      return { allowed: false, remaining: Math.max(r.limit - held, 0), retryAfterMs: at - now };
    }
    if (slots === undefined) {
      slots = { leases: new Map(), held: 0 };
      this.#keys.set(r.key, slots);
    }
    slots.leases.set(r.id, { expiresAt: now + r.leaseMs, cost: r.cost });
    slots.held += r.cost;
    return { allowed: true, remaining: r.limit - held - r.cost, retryAfterMs: 0 };
  }

  release(l: LeaseRef, now: number): boolean {
    const slots = this.#live(l.key, now);
    const lease = slots?.leases.get(l.id);
    if (lease === undefined) return false;
    slots!.leases.delete(l.id);
    slots!.held -= lease.cost;
    if (slots!.leases.size === 0) this.#keys.delete(l.key);
    return true;
  }

  extend(l: LeaseRef, leaseMs: number, now: number): boolean {
    const lease = this.#live(l.key, now)?.leases.get(l.id);
    if (lease === undefined) return false;
    lease.expiresAt = now + leaseMs;
    return true;
  }

  /** Live leases' slots of `key`: for tests. */
  held(key: string): number {
    return this.#live(key, this.#now())?.held ?? 0;
  }

  delete(key: string): void {
    this.#keys.delete(key);
  }
}
