// common.lua's floor_div and ceil_div, and math.max(0, ·), written out where a fragment assigns
// one to a variable: a Lua function call costs Redis more than the arithmetic it wraps
// (callgrind: tokenBucket's script 3–5 % fewer instructions). The steps are the helper's own, in
// the same order, so every double is the one the call would have returned; `not (x > 0)` is
// math.max(0, x)'s own test (0 for -0 and NaN too). A call this does not match stays a call.

// `x = floor_div(a, b)`, `local x = ceil_div(a, b) + y`: b a name, y a name or absent.
const ASSIGN = /^( *)(local )?([\w@]+) = (floor_div|ceil_div)\(([^\n]+), (\w+)\)(?: \+ (\w+))?$/gm;
// `x = math.max(0, floor_div(a, b))`: the same, then clamped at 0 as math.max(0, ·) would.
const CLAMPED =
  /^( *)(local )?([\w@]+) = math\.max\(0, (floor_div|ceil_div)\(([^\n]+), (\w+)\)\)$/gm;
// `x = math.max(0, e)`, e without a comma (one argument, evaluated once).
const MAX0 = /^( *)(local )?([\w@]+) = math\.max\(0, ([^,\n]+)\)$/gm;

function written(
  pad: string,
  local: string | undefined,
  name: string,
  helper: string,
  a: string,
  b: string,
  tail: string,
): string {
  const ceil = helper === 'ceil_div';
  // fd_n and fd_q: names no fragment uses, so a and b mean what they meant in the call.
  return [
    ...(local === undefined ? [] : [`${pad}local ${name}`]),
    `${pad}do`,
    `${pad}  local fd_n = ${ceil ? `-(${a})` : a}`,
    `${pad}  local fd_q = fd_n / ${b}`,
    `${pad}  fd_q = fd_q - fd_q % 1`,
    `${pad}  if fd_q * ${b} > fd_n then`,
    `${pad}    fd_q = fd_q - 1`,
    `${pad}  elseif (fd_q + 1) * ${b} <= fd_n then`,
    `${pad}    fd_q = fd_q + 1`,
    `${pad}  end`,
    `${pad}  ${name} = ${ceil ? '0 - fd_q' : 'fd_q'}${tail}`,
    `${pad}end`,
  ].join('\n');
}

/** `text` with its helper assignments written out (see above). */
export function inlineHelpers(text: string): string {
  const clamp = (pad: string, name: string) =>
    [`${pad}if not (${name} > 0) then`, `${pad}  ${name} = 0`, `${pad}end`].join('\n');
  return text
    .replace(CLAMPED, (_, pad: string, local: string | undefined, name: string, h, a, b) =>
      [written(pad, local, name, h, a, b, ''), clamp(pad, name)].join('\n'),
    )
    .replace(ASSIGN, (_, pad: string, local: string | undefined, name: string, h, a, b, y) =>
      written(pad, local, name, h, a, b, y === undefined ? '' : ` + ${y}`),
    )
    .replace(MAX0, (_, pad: string, local: string | undefined, name: string, e: string) =>
      [`${pad}${local ?? ''}${name} = ${e}`, clamp(pad, name)].join('\n'),
    );
}
