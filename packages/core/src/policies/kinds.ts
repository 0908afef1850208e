/**
 * Every policy kind, in one list: the Lua generator (scripts/gen-lua.mjs reads this array), the
 * `PolicyKind` type and the testkit's random policies all follow it. Each kind has a factory and
 * TypeScript reference in `src/policies/<file>.ts` and its Lua fragment in `<file>.lua`.
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
 */
export const POLICY_KINDS = [
  'fixedWindow',
  'slidingWindow',
  'slidingWindowLog',
  'tokenBucket',
  'leakyBucket',
] as const;

/**
 * The five algorithms.
 * @example
 * ```ts
 * import { type PolicyKind, tokenBucket } from '@floodgate/core';
 *
 * const kind: PolicyKind = tokenBucket({ limit: 5, interval: '1s' }).kind; // 'tokenBucket'
 * ```
 */
export type PolicyKind = (typeof POLICY_KINDS)[number];

/** The few characters naming a kind in a Redis key (`<prefix>:{<identity>}:<tag>:<hash>`). */
export const KIND_TAGS: Readonly<Record<PolicyKind, string>> = {
  fixedWindow: 'fw',
  slidingWindow: 'sw',
  slidingWindowLog: 'swl',
  tokenBucket: 'tb',
  leakyBucket: 'lb',
};
