// For @floodgate/* packages only (MemoryStore runs the kernels through the kind table): no
// semver promise, names here may change in any release.
export { newVerdict, type Verdict } from './policies/common.js';
export { fixedWindowKernel } from './policies/fixed_window.js';
export type { Kernel, PolicyKindRow } from './policies/kinds.js';
export { leakyBucketKernel } from './policies/leaky_bucket.js';
export { slidingWindowKernel } from './policies/sliding_window.js';
export { slidingWindowLogKernel } from './policies/sliding_window_log.js';
export { POLICY_TABLE } from './policies/table.js';
export { bucketKernel, tokenBucketKernel } from './policies/token_bucket.js';
