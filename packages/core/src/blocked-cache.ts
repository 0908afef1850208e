import { LRUCache } from 'lru-cache';
import type { Decision, PolicyDecision } from './types.js';

interface Entry {
  /** When the denial was made, on the limiter's clock. */
  readonly at: number;
  readonly until: number;
  readonly cost: number;
  readonly decision: Decision;
}

/** Calls in flight for one identity, and a counter bumped by every admission and reset. */
export interface Flight {
  calls: number;
  epoch: number;
}

/**
 * Denied identities, answered in-process until their `retryAfterMs` has passed. A cached answer
 * must never be looser than the store's, so an entry is dropped by any admission or reset of its
 * identity, and a denial is not cached when an admission or a reset of its identity finished while
 * it was in flight (it may describe a state that no longer holds). What other processes charge
 * meanwhile is not seen: their admissions only make the store stricter than the cached answer, so
 * a client told to wait by the cache is, at worst, told by the store to wait again.
 *
 * What other processes reset (or override) is heard through the store's change feed
 * (cache-watch.ts calls `invalidate`, `alive`, `down` and `missed`). The feed vouches with each
 * `alive` that nothing was missed until then; an entry older than `maxStaleMs` is served only
 * while the last vouching is younger than that, so a reset the feed failed to deliver is seen
 * within `maxStaleMs` however long the cached wait, and a store without a feed never vouches.
 */
export class BlockedCache {
  readonly #entries: LRUCache<string, Entry>;
  readonly #flights = new Map<string, Flight>();
  readonly #maxStaleMs: number;
  /** The limiter's clock at the feed's last `alive`; -Infinity while it is not known healthy. */
  #vouched = Number.NEGATIVE_INFINITY;

  constructor(max: number, maxStaleMs: number) {
    this.#entries = new LRUCache<string, Entry>({ max });
    this.#maxStaleMs = maxStaleMs;
  }

  /** The cached denial for `cost`, aged to `clock()` (reason `'blocked-cache'`), or undefined. */
  lookup(id: string, cost: number, clock: () => number): Decision | undefined {
    // The clock is read only when something is cached (a Date.now() is tens of ns).
    if (this.#entries.size === 0) return undefined;
    const hit = this.#entries.get(id);
    if (hit === undefined) return undefined;
    const now = clock();
    // Only the same cost: a larger one is denied too, but its tight wait may be longer.
    if (now >= hit.until || cost !== hit.cost) return undefined;
    const age = now - hit.at;
    // Past the bound, only a feed that vouched recently says no reset was missed meanwhile.
    if (age >= this.#maxStaleMs && now - this.#vouched >= this.#maxStaleMs) return undefined;
    return aged(hit.decision, age);
  }

  /** Before a store call for `id`; hand the flight and its epoch back to `finish`. */
  start(id: string): Flight {
    let flight = this.#flights.get(id);
    if (flight === undefined) {
      flight = { calls: 0, epoch: 0 };
      this.#flights.set(id, flight);
    }
    flight.calls++;
    return flight;
  }

  /** After the call: cache a fresh denial, or let an admission drop the identity's entry. */
  finish(
    id: string,
    flight: Flight,
    epoch: number,
    cost: number,
    decision: Decision | undefined,
    clock: () => number,
  ): void {
    if (--flight.calls === 0) this.#flights.delete(id);
    if (decision === undefined) return; // the call threw: nothing learned
    if (decision.allowed) {
      flight.epoch++;
      if (this.#entries.size !== 0) this.#entries.delete(id);
    } else if (decision.reason === undefined && flight.epoch === epoch) {
      const now = clock();
      this.#entries.set(id, { at: now, until: now + decision.retryAfterMs, cost, decision });
    }
  }

  /** A reset of `id` began or ended: drop its entry and void the denials in flight. */
  invalidate(id: string): void {
    this.#entries.delete(id);
    const flight = this.#flights.get(id);
    if (flight !== undefined) flight.epoch++;
  }

  /** The feed delivered every change made until `now` (the limiter's clock). */
  alive(now: number): void {
    this.#vouched = now;
  }

  /** The feed may miss changes from now on: entries fall back to `maxStaleMs`. */
  down(): void {
    this.#vouched = Number.NEGATIVE_INFINITY;
  }

  /** The feed may have missed changes: every entry, and every denial in flight, is suspect. */
  missed(): void {
    this.#entries.clear();
    for (const flight of this.#flights.values()) flight.epoch++;
  }
}

/** A cached denial `elapsed` ms later: every wait in it has shrunk by that much. */
function aged(d: Decision, elapsed: number): Decision {
  const age = (p: PolicyDecision): PolicyDecision => ({
    ...p,
    retryAfterMs: Math.max(0, p.retryAfterMs - elapsed),
    resetAfterMs: Math.max(0, p.resetAfterMs - elapsed),
  });
  const policies = d.policies.map(age);
  const out: Decision = {
    ...d,
    retryAfterMs: Math.max(0, d.retryAfterMs - elapsed),
    resetAfterMs: Math.max(0, d.resetAfterMs - elapsed),
    policies,
    binding: policies[d.policies.indexOf(d.binding)] ?? age(d.binding),
    reason: 'blocked-cache',
  };
  return d.shadowed === undefined ? out : { ...out, shadowed: d.shadowed.map(age) };
}
