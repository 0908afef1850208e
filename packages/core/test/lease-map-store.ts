// A LeaseStore for core's own tests (core cannot depend on @floodgate/memory): slots per key in
// a Map, no expiry, and switches for the faults a remote store has: down (every call rejects)
// and stalled (calls wait until healed).
import type { LeaseGrant, LeaseRef, LeaseRequest, LeaseStore } from '../src/lease-types.js';

export class LeaseMapStore implements LeaseStore {
  readonly held = new Map<string, Map<string, number>>();
  readonly requests: LeaseRequest[] = [];
  calls = 0;
  releases = 0;
  down = false;
  #stalled: (() => void)[] | undefined;

  constructor(readonly remote = false) {}

  /** Calls wait from now until `heal()`. */
  stall(): void {
    this.#stalled ??= [];
  }

  heal(): void {
    const waiting = this.#stalled ?? [];
    this.#stalled = undefined;
    for (const go of waiting) go();
  }

  slots(key: string): number {
    let n = 0;
    for (const cost of this.held.get(key)?.values() ?? []) n += cost;
    return n;
  }

  async #gate(): Promise<void> {
    this.calls++;
    if (this.#stalled !== undefined) await new Promise<void>((go) => this.#stalled!.push(go));
    if (this.down) throw new Error('ECONNREFUSED');
  }

  async acquireLease(r: LeaseRequest): Promise<LeaseGrant> {
    await this.#gate();
    this.requests.push(r);
    const used = this.slots(r.key);
    if (used + r.cost > r.limit) {
      return { allowed: false, remaining: r.limit - used, retryAfterMs: 60_000 };
    }
    const leases = this.held.get(r.key) ?? new Map<string, number>();
    leases.set(r.id, r.cost);
    this.held.set(r.key, leases);
    return { allowed: true, remaining: r.limit - used - r.cost, retryAfterMs: 0 };
  }

  async releaseLease(l: LeaseRef): Promise<boolean> {
    await this.#gate();
    this.releases++;
    return this.held.get(l.key)?.delete(l.id) === true;
  }

  async extendLease(l: LeaseRef): Promise<boolean> {
    await this.#gate();
    return this.held.get(l.key)?.has(l.id) === true;
  }
}

/** A remote store whose `fallback()` is a fresh in-process one, as the Redis stores have. */
export class RemoteLeaseStore extends LeaseMapStore {
  readonly fallbacks: LeaseMapStore[] = [];
  constructor() {
    super(true);
  }
  fallback(): LeaseMapStore {
    const store = new LeaseMapStore();
    this.fallbacks.push(store);
    return store;
  }
}
