// Kept for existing imports: the reference now lives per kind (policies/<kind>.ts), composed in
// policies/compose.ts.
export type { PolicyOutcome, PolicyState } from './common.js';
export { evaluateAll, evaluatePolicy } from './compose.js';
