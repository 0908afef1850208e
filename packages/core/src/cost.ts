// What a call costs (`Cost`), checked before any store is touched: one number for every policy,
// or units per policy name. The store sees `cost` alone when every policy pays the same, and
// per-policy `costs` otherwise (store-types.ts `StoreCall.costs`).
import { FloodgateError } from './errors.js';
import type { Policy } from './types.js';

/** A checked cost: `costs` (per policy, in policy order) only when they differ. */
export interface CallCost {
  /** The cost when every policy pays the same; the largest of `costs` otherwise. */
  readonly cost: number;
  readonly costs?: readonly number[];
}

/** How `costOf` checks: a settle's actual cost may be 0 and may pass a policy's capacity. */
interface CostRules {
  readonly method: string;
  /** False for an actual cost: 0 everywhere is "nothing used", above capacity is debt. */
  readonly admission: boolean;
}

const ONE: CallCost = Object.freeze({ cost: 1 });

function invalid(message: string): FloodgateError {
  return new FloodgateError('INVALID_COST', message);
}

/** A number as a cost: a safe integer, ≥ 1 where `positive`, ≥ 0 otherwise. */
function unitsOf(value: unknown, what: string, positive: boolean): number {
  const min = positive ? 1 : 0;
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < min) {
    const kind = positive ? 'a positive safe integer' : 'a safe integer ≥ 0';
    throw invalid(`${what} must be ${kind}, got ${String(value)}`);
  }
  return value;
}

/**
 * `value` (a `Cost`, undefined: 1) checked against `policies`: a number for every policy, or a
 * record of units per policy name (every name one of the policies', a left-out policy charged
 * 0). An admission's cost is positive somewhere and within each policy's capacity
 * (`COST_EXCEEDS_CAPACITY`); an actual cost may be 0 or above capacity.
 */
export function costOf(
  policies: readonly Policy[],
  value: unknown,
  rules: CostRules,
  capacity: number,
): CallCost {
  if (value === undefined) return ONE;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    const cost = unitsOf(value, 'cost', rules.admission);
    if (rules.admission && cost > capacity) throw exceeds(cost, capacity);
    return cost === 1 ? ONE : { cost };
  }
  const record = value as Record<string, unknown>;
  for (const name of Object.keys(record)) {
    if (!policies.some((p) => p.name === name)) {
      const names = policies.map((p) => JSON.stringify(p.name)).join(', ');
      throw invalid(`${rules.method}(): cost names no policy "${name}" (the policies: ${names})`);
    }
  }
  const costs = policies.map((p) =>
    // One policy's units may be 0 (it only gates); `admission` asks for some positive below.
    Object.hasOwn(record, p.name) ? unitsOf(record[p.name], `cost.${p.name}`, false) : 0,
  );
  if (rules.admission) {
    if (costs.every((c) => c === 0)) {
      throw invalid(`${rules.method}(): a cost record must charge some policy a positive cost`);
    }
    costs.forEach((c, i) => {
      if (c > policies[i]!.capacity) throw exceeds(c, policies[i]!.capacity, policies[i]!.name);
    });
  }
  const first = costs[0]!;
  if (costs.every((c) => c === first)) return first === 1 ? ONE : { cost: first };
  return { cost: Math.max(...costs), costs };
}

function exceeds(cost: number, capacity: number, name?: string): FloodgateError {
  const of = name === undefined ? '' : ` of policy "${name}",`;
  return new FloodgateError(
    'COST_EXCEEDS_CAPACITY',
    `cost ${cost} exceeds the largest admissible cost${of} ${capacity}`,
  );
}

/** Each policy's units of a checked cost, in policy order. */
export function unitsPerPolicy(c: CallCost, n: number): readonly number[] {
  return c.costs ?? new Array<number>(n).fill(c.cost);
}
