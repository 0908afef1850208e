// Kept for existing imports: the integer helpers live with the policies (policies/common.ts).
export { ceilDiv, floorDiv, gcd } from './policies/common.js';
