// Reservations (`limiter.reserve`): an admission charged at an estimate, corrected once by
// `settle` (the difference, charged past the limit if need be, or given back) or `cancel`.
// The limiter makes the store call (limiter.ts `settleCharge`); this module checks the options,
// keeps the reservation's once-only state and works out the differences.
import { type CallCost, costOf, unitsPerPolicy } from './cost.js';
import { FloodgateError } from './errors.js';
import type { Cost, Reservation } from './reserve-types.js';
import type { Decision, Policy, PolicyDecision } from './types.js';

/** `settleWithinMs`'s default: long enough for a model's longest streamed answer. */
export const SETTLE_WITHIN_MS = 600_000;

/** What a reservation needs of its limiter. */
export interface SettleHost {
  readonly policies: readonly Policy[];
  /** The limiter's capacity (its policies' smallest). */
  readonly capacity: number;
  /** The clock decisions are made on (the store's, or `Date.now`). */
  now(): number;
  /**
   * Charges (positive) or gives back (negative) `costs`, per policy in policy order, on the
   * policies `decision` charged: one store round trip, or none when nothing changes.
   */
  settle(id: string, decision: Decision, costs: readonly number[]): Promise<void>;
}

/** `reserve()`'s options, checked: the estimate and how long settling is taken. */
export function reserveOptionsOf(
  opts: unknown,
  host: SettleHost,
): { estimate: CallCost; settleWithinMs: number } {
  if (opts === undefined)
    return {
      estimate: costOf(host.policies, undefined, RESERVE, 1),
      settleWithinMs: SETTLE_WITHIN_MS,
    };
  if (typeof opts !== 'object' || opts === null) throw optionError();
  for (const k in opts) {
    if (Object.hasOwn(opts, k) && k !== 'cost' && k !== 'settleWithinMs') throw optionError();
  }
  const o = opts as { cost?: unknown; settleWithinMs?: unknown };
  const within = o.settleWithinMs ?? SETTLE_WITHIN_MS;
  if (typeof within !== 'number' || !Number.isSafeInteger(within) || within <= 0) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `settleWithinMs must be a positive whole number of ms, got ${String(o.settleWithinMs)}`,
    );
  }
  return {
    estimate: costOf(host.policies, o.cost, RESERVE, host.capacity),
    settleWithinMs: within,
  };
}

const RESERVE = { method: 'reserve', admission: true } as const;
const SETTLE = { method: 'settle', admission: false } as const;

function optionError(): FloodgateError {
  return new FloodgateError('INVALID_OPTION', 'reserve() takes { cost, settleWithinMs }');
}

/**
 * The reservation for `decision`, admitted (or not) at `estimate` for the encoded identity `id`.
 * `settle` and `cancel` are taken once, from the first call on: one still in flight counts,
 * and one that failed too (its store call may have been applied before the failure reached
 * us, and a second would charge twice).
 */
export function reservationOf(
  decision: Decision,
  id: string,
  estimate: CallCost,
  settleWithinMs: number,
  host: SettleHost,
): Reservation {
  const until = performance.now() + settleWithinMs;
  const at = host.now();
  const reserved = unitsPerPolicy(estimate, host.policies.length);
  let done = false;
  const correct = (actual: readonly number[]): Promise<void> => {
    if (done)
      return rejected('ALREADY_SETTLED', 'this reservation was already settled or cancelled');
    if (!decision.allowed) {
      return rejected('RESERVATION_DENIED', 'a denied reservation charged nothing to settle');
    }
    if (performance.now() > until) {
      done = true;
      return rejected(
        'RESERVATION_EXPIRED',
        `settled after settleWithinMs (${settleWithinMs} ms): the estimate stands`,
      );
    }
    done = true;
    const elapsed = host.now() - at;
    // Units the reservation charged that its policy no longer counts are not given back: a
    // give-back would free units charged by later calls (a window that ended, a bucket refilled).
    const parts = partsOf(decision, host.policies);
    const diffs = actual.map((a, i) => {
      const d = a - reserved[i]!;
      return d < 0 && elapsed >= heldMs(host.policies[i]!, parts[i]) ? 0 : d;
    });
    if (diffs.every((d) => d === 0)) return Promise.resolve();
    return host.settle(id, decision, diffs);
  };
  return {
    ...decision,
    settle(actual: Cost) {
      let units: readonly number[];
      try {
        // Checked before anything else: bad input leaves the reservation as it was.
        if (actual === undefined) {
          throw new FloodgateError('INVALID_COST', 'settle() takes the actual cost');
        }
        units = unitsPerPolicy(
          costOf(host.policies, actual, SETTLE, host.capacity),
          host.policies.length,
        );
      } catch (error) {
        return Promise.reject(error);
      }
      return correct(units);
    },
    cancel() {
      return correct(reserved.map(() => 0));
    },
  };
}

/**
 * How long after an admission policy `p` still counts what it charged (`part`: its part of the
 * admission's decision): to the end of its window (period) for fixedWindow and quota, to the end
 * of the window it was charged in for slidingWindow (its count is then the previous window's,
 * which a refund never touches), until the entry leaves the window for slidingWindowLog, until
 * full again for the buckets. Each is the admission's own `resetAfterMs`, less a window for
 * slidingWindow.
 */
export function heldMs(p: Policy, part: PolicyDecision | undefined): number {
  const reset = part?.resetAfterMs ?? 0;
  return p.kind === 'slidingWindow' ? reset - p.windowMs : reset;
}

/** The decision's part of each policy, in policy order (a partly shadowed limiter lists them apart). */
function partsOf(decision: Decision, policies: readonly Policy[]): (PolicyDecision | undefined)[] {
  if (decision.shadowed === undefined) return [...decision.policies];
  let e = 0;
  let s = 0;
  return policies.map((p) =>
    p.shadow === true ? decision.shadowed![s++] : decision.policies[e++],
  );
}

function rejected(
  code: 'ALREADY_SETTLED' | 'RESERVATION_DENIED' | 'RESERVATION_EXPIRED',
  message: string,
): Promise<never> {
  return Promise.reject(new FloodgateError(code, message));
}
