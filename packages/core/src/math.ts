// Integer helpers shared, operation for operation, with the Lua scripts (lua/common.lua): every
// value stays a safe integer, so TypeScript and Lua doubles agree bit for bit.

/** floor(a / b) for safe integers, b > 0, exact even where a / b rounds up to an integer. */
export function floorDiv(a: number, b: number): number {
  let q = Math.floor(a / b);
  if (q * b > a) q -= 1;
  else if ((q + 1) * b <= a) q += 1;
  return q;
}

/** ceil(a / b) for safe integers, b > 0. */
export function ceilDiv(a: number, b: number): number {
  return -floorDiv(-a, b);
}

export function gcd(a: number, b: number): number {
  while (b !== 0) [a, b] = [b, a % b];
  return a;
}
