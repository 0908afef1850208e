// skipSuccessfulRequests / skipFailedRequests: what a request was charged is given back
// (limiter.refund) once its response says it should not count.
import type { Decision, Limiter } from '@floodgate/core';
import type { Settings } from './options.js';
import { report } from './report.js';
import type { RateLimitRequest } from './types.js';

/** One admission a request was charged: what `limiter.refund` gives back. */
export interface Charge {
  readonly limiter: Limiter;
  readonly key: string;
  readonly cost: number;
  /** The admission's decision: the refund gives back only what it charged (shadowed policies). */
  readonly decision: Decision;
}

/**
 * Called once the response is known: with its status, or `undefined` when it never finished
 * (the client left, the handler threw): a failure. Called again, it does nothing.
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
export type Settle = (status: number | undefined) => void;

/** The request's settle, or undefined when neither option is set or nothing was charged. */
export function settlerFor(
  settings: Settings,
  request: RateLimitRequest,
  charges: readonly Charge[],
): Settle | undefined {
  const on = settings.refundOn;
  if (on === undefined || charges.length === 0) return undefined;
  let settled = false;
  return (status) => {
    if (settled) return;
    settled = true;
    void refundIf(settings, on, request, charges, status);
  };
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
    const done = await Promise.allSettled(
      charges.map((c) => c.limiter.refund(c.key, { cost: c.cost, decision: c.decision })),
    );
    // Never thrown at the server: the response is gone. Told to onError, like any absorbed error.
    for (const r of done) if (r.status === 'rejected') report(settings.onError, r.reason, request);
  } catch (error) {
    report(settings.onError, error, request);
  }
}
