// What the object does with each RPC: core's reference composition (`evaluateAll`) on the rows
// of the call's keys, the lease rules MemoryStore and the Redis lease script share, and the
// override rows `evaluateAll` reads. Every method is synchronous from its first read to its last
// write, so each is atomic on the object (see rows.ts).
import {
  evaluateAll,
  type LeaseGrant,
  type PolicyResult,
  type PolicyState,
  type StoreCall,
} from '@floodgate/core/store';
import type { Row, Rows } from './rows.js';
import type { DecideRequest, LeaseCall } from './wire.js';

/** One lease as a lease row holds it: id, expiry on the decision clock, slots. */
type Held = [id: string, expiresAt: number, cost: number];

const parse = (row: Row | undefined, now: number): PolicyState | undefined =>
  row !== undefined && row.e > now ? (JSON.parse(row.v) as PolicyState) : undefined;

/** True when the call has a deadline and the object's clock has reached it. */
const late = (deadline: number | undefined): boolean =>
  deadline !== undefined && Date.now() >= deadline;

export class Engine {
  readonly #rows: Rows;

  constructor(rows: Rows) {
    this.#rows = rows;
  }

  decide(request: DecideRequest): PolicyResult[] | null {
    const call = request.call;
    const client = request.now !== undefined;
    const now = request.now ?? Date.now();
    const keys = call.keys;
    const rows = this.#rows.read(keys);
    const states = keys.map((k) => parse(rows.get(k), now));
    if (late(request.deadline)) return null;
    // A WireCall has every field evaluateAll reads (identity and prefix are for in-process stores).
    const { results, writes } = evaluateAll(call as StoreCall, states, now);
    const gone: string[] = [];
    for (let i = 0; i < writes.length; i++) {
      const w = writes[i];
      if (w === null) gone.push(keys[i]!);
      else if (w !== undefined) {
        this.#rows.write(keys[i]!, JSON.stringify(w.state), now + w.ttlMs, now, client);
      }
    }
    this.#rows.delete(gone);
    return results;
  }

  reset(keys: readonly string[]): void {
    this.#rows.delete(keys);
  }

  /** The lease rules: expired leases (expiry at or before now) hold nothing and are dropped. */
  lease(step: LeaseCall): LeaseGrant | null {
    if (step.op === 'acquire' && late(step.deadline)) return null;
    const client = step.now !== undefined;
    const now = step.now ?? Date.now();
    const raw = this.#rows.live(step.key, now);
    const all = raw === undefined ? [] : (JSON.parse(raw) as Held[]);
    const held = all.filter((l) => l[1] > now);
    let slots = 0;
    for (const l of held) slots += l[2];
    const mine = held.findIndex((l) => l[0] === step.id);
    let grant: LeaseGrant;
    if (step.op === 'acquire') {
      const limit = step.limit ?? 0;
      if (slots + step.cost > limit) return denial(held, slots, step.cost, limit, now);
      held.push([step.id, now + (step.leaseMs ?? 0), step.cost]);
      grant = { allowed: true, remaining: limit - slots - step.cost, retryAfterMs: 0 };
    } else if (mine < 0) {
      // Gone already (released, or expired): nothing to change, nothing written.
      return { allowed: false, remaining: 0, retryAfterMs: 0 };
    } else if (step.op === 'release') {
      held.splice(mine, 1);
      grant = { allowed: true, remaining: 0, retryAfterMs: 0 };
    } else {
      held[mine]![1] = now + (step.leaseMs ?? 0);
      grant = { allowed: true, remaining: 0, retryAfterMs: 0 };
    }
    if (held.length === 0) this.#rows.delete([step.key]);
    else {
      // The row lives exactly as long as its latest lease.
      let last = 0;
      for (const l of held) last = Math.max(last, l[1]);
      this.#rows.write(step.key, JSON.stringify(held), last, now, client);
    }
    return grant;
  }

  writeOverrides(
    keys: readonly string[],
    states: readonly (PolicyState | null)[],
    now: number | undefined,
  ): void {
    const t = now ?? Date.now();
    const gone: string[] = [];
    keys.forEach((key, i) => {
      const s = states[i];
      // An override ends at its until: one already over is a delete.
      if (s === null || s === undefined || !(s[0]! > t)) gone.push(key);
      else this.#rows.write(key, JSON.stringify(s), s[0]!, t, now !== undefined);
    });
    this.#rows.delete(gone);
  }

  readOverrides(keys: readonly string[], now: number | undefined): (PolicyState | undefined)[] {
    const t = now ?? Date.now();
    const rows = this.#rows.read(keys);
    return keys.map((k) => parse(rows.get(k), t));
  }

  ttl(key: string, now: number | undefined): number | undefined {
    const t = now ?? Date.now();
    const row = this.#rows.read([key]).get(key);
    return row !== undefined && row.e > t ? row.e - t : undefined;
  }
}

/** A full identity: nothing is written; the wait is until enough slots expire for `cost`. */
function denial(held: Held[], slots: number, cost: number, limit: number, now: number): LeaseGrant {
  const byExpiry = held.slice().sort((a, b) => a[1] - b[1]);
  let need = slots + cost - limit;
  let at = now;
  for (const l of byExpiry) {
    at = l[1];
    need -= l[2];
    if (need <= 0) break;
  }
  return { allowed: false, remaining: Math.max(limit - slots, 0), retryAfterMs: at - now };
}
