/**
 * Every policy kind, in one list: the Lua generator (scripts/gen-lua.mjs reads this array), the
 * `PolicyKind` type, the kind table (`table.ts`, which the compiler holds to one row per name
 * here) and the testkit's random policies all follow it. Each kind has a factory, a kernel and
 * its row in `src/policies/<file>.ts` and its Lua fragment in `<file>.lua`.
 * @example
 * Checking a kind read from configuration.
 * ```ts
 * import type { PolicyKind } from '@floodgate/core';
 * import { POLICY_KINDS } from '@floodgate/core/store';
 *
 * function isPolicyKind(value: string): value is PolicyKind {
 *   return (POLICY_KINDS as readonly string[]).includes(value);
 * }
 * ```
 * @public
 */
export const POLICY_KINDS = [
  'fixedWindow',
  'slidingWindow',
  'slidingWindowLog',
  'tokenBucket',
  'leakyBucket',
  'quota',
] as const;

/**
 * The five algorithms and the calendar quota.
 * @example
 * ```ts
 * import { type PolicyKind, tokenBucket } from '@floodgate/core';
 *
 * const kind: PolicyKind = tokenBucket({ limit: 5, interval: '1s' }).kind; // 'tokenBucket'
 * ```
 * @public
 */
export type PolicyKind = (typeof POLICY_KINDS)[number];
