// `rateLimit({ settle })`: each rule admitted a reservation at its estimate (rules.ts); once the
// response is done, every one is settled with the actual cost (what the `settle` function says,
// else what the handler reported through `usageOf`, else the estimate stands), or cancelled when
// skipSuccessfulRequests / skipFailedRequests say the response does not count, or when the
// handler never ran (this middleware answered, or the client left while held).
import { type Cost, type Decision, FloodgateError, type Limiter } from '@floodgate/core';
import type { Settings } from './options.js';
import { report } from './report.js';
import type { Charge, Settle, Settler } from './settle.js';
import type { SettleContext } from './settle-types.js';
import { createSlot } from './slot.js';
import type { RateLimitRequest } from './types.js';
import { meterOf } from './usage.js';

/** `settle` and `settleWithinMs`, resolved: what `rules.ts` and this module run on. */
export interface Reserving {
  /** The `settle` function; `undefined` for `settle: true`. */
  readonly actual:
    | ((context: SettleContext) => Cost | undefined | Promise<Cost | undefined>)
    | undefined;
  readonly settleWithinMs: number | undefined;
}

/**
 * One rule's admission as a reservation: the plain decision (without `settle` and `cancel`,
 * which only this middleware calls) and the charge to settle.
 */
export async function reserveWith(
  reserving: Reserving,
  limiter: Limiter,
  key: string,
  cost: Cost,
): Promise<{ decision: Decision; charge: Charge }> {
  const within = reserving.settleWithinMs;
  // Checked when the middleware is made for a limiter known then; a hand-written one met here.
  if (limiter.reserve === undefined) {
    throw new FloodgateError('INVALID_OPTION', 'settle needs limiters with reserve()');
  }
  const reservation = await limiter.reserve(
    key,
    within === undefined ? { cost } : { cost, settleWithinMs: within },
  );
  const { settle: _settle, cancel: _cancel, ...decision } = reservation;
  return { decision, charge: { limiter, key, cost, decision, reservation } };
}

// Settles that want the response's end, not only its status: a Web adapter (fetch, Hono) waits
// for the body to be read to its end, or cancelled, before calling them.
const atEnd = createSlot<true>('floodgate.settle.atEnd');

/** Whether `settle` is to be called at the end of the body (reservations), not at its status. */
export const settlesAtEnd = (settle: Settle): boolean => atEnd.get(settle) === true;

/** The settler of a request's reservations (`charges`, each with its reservation). */
export function reservationSettler(
  settings: Settings,
  request: RateLimitRequest,
  charges: readonly Charge[],
): Settler {
  const meter = meterOf(request.raw);
  const done = meter.register();
  let over = false;
  const settle: Settle = (status, aborted) => {
    if (over) return;
    over = true;
    // What was reported by now: a client that left is charged what it had been sent.
    const reported = meter.reported;
    const ended = aborted === true || status === undefined;
    void settleAll(settings, request, charges, status, ended, reported).finally(done);
  };
  const drop = (): void => {
    if (over) return;
    over = true;
    void each(settings, request, charges, (c) => c.reservation?.cancel()).finally(done);
  };
  atEnd.set(settle, true);
  return { settle, drop };
}

/** Runs `act` on every charge at once; failures go to `onError`. Never rejects. */
async function each(
  settings: Settings,
  request: RateLimitRequest,
  charges: readonly Charge[],
  act: (charge: Charge) => Promise<void> | undefined,
): Promise<void> {
  const results = await Promise.allSettled(charges.map(act));
  for (const r of results) if (r.status === 'rejected') report(settings.onError, r.reason, request);
}

async function settleAll(
  settings: Settings,
  request: RateLimitRequest,
  charges: readonly Charge[],
  status: number | undefined,
  aborted: boolean,
  reported: Cost | undefined,
): Promise<void> {
  try {
    const on = settings.refundOn;
    if (on !== undefined) {
      const success =
        !aborted && status !== undefined && (await settings.requestWasSuccessful(request, status));
      if (success ? on.success : on.failure) {
        await each(settings, request, charges, (c) => c.reservation?.cancel());
        return;
      }
    }
    let actual = reported;
    const compute = settings.reserving?.actual;
    if (compute !== undefined) {
      const computed = await compute({ request, status, aborted, reported });
      if (computed !== undefined) actual = computed;
    }
    // Nothing reported, nothing computed: every estimate stands, no store call.
    if (actual === undefined) return;
    const real = actual;
    await each(settings, request, charges, (c) => {
      const own = actualFor(c, real);
      return own === undefined ? undefined : c.reservation?.settle(own);
    });
  } catch (error) {
    report(settings.onError, error, request);
  }
}

/** A policy's units in a cost: a number is every policy's, a record's left-out policy is 0. */
const unitsOf = (cost: Cost, name: string): number =>
  typeof cost === 'number' ? cost : (cost[name] ?? 0);

/**
 * The actual cost of one reservation: a number as it is; a record narrowed to the limiter's
 * policies, a policy it leaves out keeping its estimate. `undefined` when the record names none
 * of them: the estimate stands.
 */
export function actualFor(charge: Charge, actual: Cost): Cost | undefined {
  if (typeof actual === 'number') return actual;
  const own: Record<string, number> = {};
  let named = false;
  for (const { name } of charge.limiter.policies) {
    if (Object.hasOwn(actual, name)) {
      own[name] = actual[name] as number;
      named = true;
    } else own[name] = unitsOf(charge.cost, name);
  }
  return named ? own : undefined;
}
