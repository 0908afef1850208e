import { FIXED_WINDOW } from './fixed_window.js';
import type { PolicyKind, PolicyKindRow } from './kinds.js';
import { LEAKY_BUCKET } from './leaky_bucket.js';
import { QUOTA } from './quota.js';
import { SLIDING_WINDOW } from './sliding_window.js';
import { SLIDING_WINDOW_LOG } from './sliding_window_log.js';
import { TOKEN_BUCKET } from './token_bucket.js';

/**
 * The kind table: every kind's row (key tag, Lua fragment, parameter count, shaping, state width,
 * kernel), by kind. The reference (`evaluatePolicy`), MemoryStore and the Lua assembly read a
 * kind here instead of switching on it; the type makes a kind in `POLICY_KINDS` without a row
 * (or a row filed under another kind's name) a compile error.
 * @example
 * The part of `ARGV` a limiter's policies take, and whether any of them shapes.
 * ```ts
 * import { leakyBucket, tokenBucket } from '@floodgate/core';
 * import { POLICY_TABLE } from '@floodgate/core/internal';
 *
 * const policies = [tokenBucket({ limit: 10, interval: '1s' }), leakyBucket({ limit: 5, interval: '1s', queue: 5 })];
 * const argv = policies.reduce((n, p) => n + POLICY_TABLE[p.kind].params, 4); // 10
 * const shapes = policies.some((p) => POLICY_TABLE[p.kind].shaping); // true
 * ```
 * @internal
 */
export const POLICY_TABLE: { readonly [K in PolicyKind]: PolicyKindRow<K> } = {
  fixedWindow: FIXED_WINDOW,
  slidingWindow: SLIDING_WINDOW,
  slidingWindowLog: SLIDING_WINDOW_LOG,
  tokenBucket: TOKEN_BUCKET,
  leakyBucket: LEAKY_BUCKET,
  quota: QUOTA,
};
