/**
 * `@floodgate/core/internal`: for the `@floodgate/*` packages only (`@floodgate/memory` runs the
 * policy kernels in place, through the kind table). Released in lockstep with them (one
 * changesets fixed group, and they depend on core exactly), so anything here may change in any
 * release: no semver promise.
 * @internal
 * @module
 */
export { invalidateCached } from './cache-watch.js';
export { durationStringMs } from './duration.js';
export { checkOptions, type OptionNames } from './options.js';
export { newVerdict, type Verdict } from './policies/common.js';
export { shadowingOf } from './policies/compose.js';
export { fixedWindowKernel } from './policies/fixed_window.js';
export type { Kernel, PerCallParams, PolicyKindRow, RefundKernel } from './policies/kinds.js';
export { leakyBucketKernel } from './policies/leaky_bucket.js';
export { quotaKernel, quotaPeriodEnd } from './policies/quota.js';
export { slidingWindowKernel } from './policies/sliding_window.js';
export { slidingWindowLogKernel } from './policies/sliding_window_log.js';
export { POLICY_TABLE } from './policies/table.js';
export { bucketKernel, tokenBucketKernel } from './policies/token_bucket.js';
export { afterIo } from './timeout.js';
export { printWarning, warnOnce } from './warn.js';
