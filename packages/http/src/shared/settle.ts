// skipSuccessfulRequests / skipFailedRequests: what a request was charged is given back
// (limiter.refund) once its response says it should not count. With `settle`, the request's
// reservations are settled instead (reservations.ts).
import {
  type Cost,
  type Decision,
  FloodgateError,
  type Limiter,
  type Reservation,
} from '@floodgate/core';
import type { Settings } from './options.js';
import { report } from './report.js';
import { reservationSettler } from './reservations.js';
import type { RateLimitRequest } from './types.js';

/** One admission a request was charged: what `limiter.refund` gives back. */
export interface Charge {
  readonly limiter: Limiter;
  readonly key: string;
  readonly cost: Cost;
  /** The admission's decision: the refund gives back only what it charged (shadowed policies). */
  readonly decision: Decision;
  /** With `settle`: the reservation to settle (`decision` is it, without its methods). */
  readonly reservation?: Reservation;
}

/**
 * Called once the response is done: with its status, or `undefined` when none was sent (the
 * client left, the handler threw); `aborted` when it did not finish (the client left
 * mid-response too: then with the status that was sent). Without `aborted`, a status means the
 * response finished. Called again, it does nothing.
 * @example
 * An adapter of your own settles an admitted request with its response's status.
 * ```ts
 * import type { Outcome } from '@floodgate/http/adapter';
 *
 * declare const outcome: Outcome;
 * declare function respond(): Promise<number>; // the handler; resolves with the status sent
 * if (outcome.action === 'next') {
 *   const status = await respond().catch(() => undefined);
 *   outcome.settle?.(status);
 * }
 * ```
 * @public
 */
export type Settle = (status: number | undefined, aborted?: boolean) => void;

/**
 * A request's settle (for its outcome), and `drop` for a request whose handler never ran
 * (this middleware answered it, or the client left while it was held): refunds as `settle`
 * would, reservations cancelled.
 */
export interface Settler {
  readonly settle: Settle;
  readonly drop: (status: number | undefined) => void;
}

/** The request's settler, or undefined when nothing is to settle or nothing was charged. */
export function settlerFor(
  settings: Settings,
  request: RateLimitRequest,
  charges: readonly Charge[],
): Settler | undefined {
  if (charges.length === 0) return undefined;
  if (settings.reserving !== undefined) return reservationSettler(settings, request, charges);
  const on = settings.refundOn;
  if (on === undefined) return undefined;
  let settled = false;
  const settle: Settle = (status, aborted) => {
    if (settled) return;
    settled = true;
    void refundIf(settings, on, request, charges, aborted === true ? undefined : status);
  };
  return { settle, drop: settle };
}

async function refundIf(
  settings: Settings,
  on: NonNullable<Settings['refundOn']>,
  request: RateLimitRequest,
  charges: readonly Charge[],
  status: number | undefined,
): Promise<void> {
  try {
    const success = status !== undefined && (await settings.requestWasSuccessful(request, status));
    if (success ? !on.success : !on.failure) return;
    const done = await Promise.allSettled(charges.map(refundOne));
    // Never thrown at the server: the response is gone. Told to onError, like any absorbed error.
    for (const r of done) if (r.status === 'rejected') report(settings.onError, r.reason, request);
  } catch (error) {
    report(settings.onError, error, request);
  }
}

function refundOne(c: Charge): Promise<void> {
  if (typeof c.cost !== 'number') {
    return Promise.reject(
      new FloodgateError(
        'INVALID_OPTION',
        'skipSuccessfulRequests / skipFailedRequests give a per-policy cost back only with `settle` (a reservation is cancelled); the charge stands',
      ),
    );
  }
  return c.limiter.refund(c.key, { cost: c.cost, decision: c.decision });
}
