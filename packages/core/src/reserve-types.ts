// The public shape of per-policy costs and of reservations, types only; cost.ts checks a cost,
// reserve.ts builds a reservation.
import type { Decision } from './types.js';

/**
 * What one call costs: a number charges every policy that many units; a record charges each
 * policy by its `name` (a policy the record leaves out is charged 0: it still denies while it is
 * over its limit, in debt, or blocked). Every value is a safe integer ≥ 0, at least one is
 * positive, each is at most its policy's capacity, and every name is one of the limiter's.
 * @example
 * Requests and tokens per minute, charged together.
 * ```ts
 * import { createLimiter, fixedWindow, type Cost } from '@floodgate/core';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: [
 *     fixedWindow({ limit: 60, window: '1m', name: 'requests' }),
 *     fixedWindow({ limit: 90_000, window: '1m', name: 'tokens' }),
 *   ],
 * });
 * const cost: Cost = { requests: 1, tokens: 1_200 };
 * const d = await limiter.limit('key_123', { cost });
 * ```
 * @public
 */
export type Cost = number | Readonly<Record<string, number>>;

/**
 * `reserve()`'s options.
 * @example
 * An estimate of one request and the most tokens an answer may take, settled within 2 minutes.
 * ```ts
 * import type { ReserveOptions } from '@floodgate/core';
 *
 * const options: ReserveOptions = {
 *   cost: { requests: 1, tokens: 1_200 + 4_096 },
 *   settleWithinMs: 120_000,
 * };
 * ```
 * @public
 */
export interface ReserveOptions {
  /** The estimate to admit against (a `Cost`). @default 1 */
  cost?: Cost;
  /**
   * How long after the reservation `settle()` and `cancel()` are taken, in ms (a whole number
   * > 0). Later ones reject with `RESERVATION_EXPIRED` and the estimate stands.
   * @default 600000
   */
  settleWithinMs?: number;
}

/**
 * An admission charged at an estimate, to be corrected once the real cost is known: the
 * decision itself (`allowed`, `remaining`, …) with `settle` and `cancel`. Only an admitted
 * reservation settles; a reservation never settled stays charged at its estimate.
 * @example
 * ```ts
 * import type { ReservingLimiter } from '@floodgate/core';
 *
 * declare const limiter: ReservingLimiter;
 * const r = await limiter.reserve('key_123', { cost: { requests: 1, tokens: 4_096 } });
 * if (r.allowed) {
 *   // ... call the model; it used 1 733 tokens:
 *   await r.settle({ requests: 1, tokens: 1_733 });
 * }
 * ```
 * @public
 */
export interface Reservation extends Decision {
  /**
   * Charges the difference where `actual` is above the estimate, even past a policy's limit
   * (debt: later calls are denied until the policy has paid it back), and gives the difference
   * back where it is below; one store round trip. Once: a second `settle` or one after `cancel`
   * rejects with `ALREADY_SETTLED`; on a denied reservation with `RESERVATION_DENIED`; after
   * `settleWithinMs` with `RESERVATION_EXPIRED`.
   */
  settle(actual: Cost): Promise<void>;
  /** Gives the whole estimate back (the call was never made): `settle` with a cost of 0. */
  cancel(): Promise<void>;
}
