// The options of per-policy costs and settling (`cost` records, `settle`, `settleWithinMs`),
// checked when the middleware is made: a bad one is FloodgateError('INVALID_OPTION') before any
// request, never a 503 per request.
import { FloodgateError } from '@floodgate/core';
import type { Reserving } from './reservations.js';
import type { RateLimitOptions } from './types.js';

const invalid = (message: string): FloodgateError => new FloodgateError('INVALID_OPTION', message);

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A `cost` option: a positive whole number, a record of whole numbers ≥ 0, or a function. */
export function checkCostOption(cost: unknown, name: string): void {
  if (cost === undefined || typeof cost === 'function') return;
  if (isRecord(cost)) {
    const entries = Object.entries(cost);
    for (const [policy, units] of entries) {
      if (typeof units !== 'number' || !Number.isSafeInteger(units) || units < 0) {
        throw invalid(`${name}.${policy} must be a whole number ≥ 0, got ${String(units)}`);
      }
    }
    if (!entries.some(([, units]) => (units as number) > 0)) {
      throw invalid(`${name} must charge some policy a positive cost`);
    }
    return;
  }
  if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost <= 0) {
    throw invalid(
      `${name} must be a positive whole number, a record of units per policy name, or a function, got ${String(cost)}`,
    );
  }
}

/** `settle` and `settleWithinMs`, or `undefined` when the middleware does not settle. */
export function resolveReserving(options: RateLimitOptions): Reserving | undefined {
  const { settle, settleWithinMs } = options;
  if (settle !== undefined && typeof settle !== 'boolean' && typeof settle !== 'function') {
    throw invalid(`settle must be true, false or a function, got ${String(settle)}`);
  }
  const on = settle === true || typeof settle === 'function';
  if (settleWithinMs !== undefined) {
    if (!on) throw invalid('settleWithinMs applies only with `settle`');
    if (
      typeof settleWithinMs !== 'number' ||
      !Number.isSafeInteger(settleWithinMs) ||
      settleWithinMs <= 0
    ) {
      throw invalid(
        `settleWithinMs must be a whole number of ms > 0, got ${String(settleWithinMs)}`,
      );
    }
  }
  if (!on) return undefined;
  return { actual: typeof settle === 'function' ? settle : undefined, settleWithinMs };
}

/** What `checkRecordCosts` needs of a resolved rule. */
interface CostedRule {
  readonly limiter: unknown;
  readonly cost: unknown;
}

/**
 * With `settle`, a limiter known now can reserve. A record `cost` names policies of the rule's
 * limiter, when that limiter is known now; and without `settle`, `skipSuccessfulRequests` / `skipFailedRequests` cannot give one back
 * (`limiter.refund` takes a number).
 */
export function checkRecordCosts(
  rules: readonly CostedRule[],
  options: RateLimitOptions,
  reserving: Reserving | undefined,
): void {
  rules.forEach((rule, i) => {
    const fixed = typeof rule.limiter === 'function' ? undefined : rule.limiter;
    if (
      reserving !== undefined &&
      fixed !== undefined &&
      typeof (fixed as { reserve?: unknown }).reserve !== 'function'
    ) {
      throw invalid('settle needs limiters with reserve(), from a @floodgate/core that has it');
    }
    const cost = rule.cost;
    if (!isRecord(cost)) return;
    const where = rules.length === 1 ? 'cost' : `rules[${i}]: cost`;
    if (
      reserving === undefined &&
      (options.skipSuccessfulRequests === true || options.skipFailedRequests === true)
    ) {
      throw invalid(
        `${where} per policy is given back by skipSuccessfulRequests / skipFailedRequests only with \`settle\` (its reservation is cancelled)`,
      );
    }
    const policies = (fixed as { policies?: readonly { name: string }[] } | undefined)?.policies;
    if (policies === undefined) return;
    for (const name of Object.keys(cost)) {
      if (!policies.some((p) => p.name === name)) {
        const names = policies.map((p) => JSON.stringify(p.name)).join(', ');
        throw invalid(`${where} names no policy "${name}" of its limiter (the policies: ${names})`);
      }
    }
  });
}
