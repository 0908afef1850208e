// The `writeFormat` option (limiter-types.ts): the state forms a limiter writes while processes
// of an earlier release share its store. 1.1 added a fourth field to a token bucket's state, its
// fill time, where its burst is not its limit ("tat:ticks:perMs:fill", token_bucket.ts
// fillShift). 1.0's script matches only three: it fails on such a state, and a 1.0 limiter then
// decides by its fallback, each process on its own, for as long as the fleet is mixed.
import { FloodgateError } from './errors.js';
import type { Policy } from './types.js';

/**
 * `policies` as a limiter with `writeFormat` runs them. `'1.0'`: each token bucket's fourth
 * parameter, its fill time at its limit, becomes its own fill time, so its states are written in
 * the short forms 1.0 reads (the kernel writes a fill time only where the two differ) and read as
 * 1.0 read them; a state that a 1.1 process without the option wrote is still read with its fill
 * time. Undefined (or `false`): as they are.
 */
export function withWriteFormat(policies: readonly Policy[], format: unknown): readonly Policy[] {
  if (format === undefined || format === false) return policies;
  if (format !== '1.0') {
    throw new FloodgateError('INVALID_OPTION', "writeFormat must be '1.0' or false");
  }
  return Object.freeze(
    policies.map((p) => {
      if (p.kind !== 'tokenBucket') return p;
      const [capacity, perUnit, perMs] = p.params;
      const params = Object.freeze([capacity, perUnit, perMs, capacity * perUnit] as const);
      return Object.freeze({ ...p, params });
    }),
  );
}
