// The Lua a limit script holds for a limiter with `migrateKeys: '0.1'` (assemble.ts calls it;
// policies/migrate.ts with compose.ts `evaluateAll` is the reference). Scripts of limiters without
// it hold none of it: same keys, same commands, same text as before.
// KEYS: after the policies', block and override keys, each policy's 0.1 key, then each blocking
// policy's 0.1 block key. Before a policy's @eval, `premerge` reads its 0.1 key in 0.1's format
// (the limit in the radix, as 0.1 wrote it, from the policy's own ARGV parameters, which must be
// those the 0.1 fleet runs) and its 1.0 key, and where the 0.1 state is the stricter, copies it
// onto the 1.0 key (in a form 1.0 reads, with the 0.1 key's expiry): the fragment then decides on
// the stricter state as it stands. After each write to a policy's key (an admission's, a
// refund's), `mirror` writes the key's new state to its 0.1 key in 0.1's format, with the same
// expiry, so a 0.1 process reads what 1.0 charged. INCRBY (the window kinds' fast write) is off:
// a key premerged holds a string form.
import type { PolicyKind } from '../policies/kinds.js';

const TWO53 = '9007199254740992';

/** Lua reading a raw value into locals, per format. */
function decodeWindowNew(kind: PolicyKind, raw: string, s: string, c: string): string {
  if (kind === 'quota') {
    return `local x = tonumber(${raw})
if x then
local k = x / 67108864
k = k - k % 1
${s}, ${c} = k * 60000, x - k * 67108864
else
local a, b = string.match(${raw}, '^(%d+):(%d+)$')
${s}, ${c} = tonumber(a), tonumber(b)
end`;
  }
  return `local x = tonumber(${raw})
if x then
local radix = 4398046511104 / w
local _, e = math.frexp(radix - radix % 1)
radix = math.ldexp(1, 53 - e)
local k = x / radix
k = k - k % 1
${s}, ${c} = k * w, x - k * radix
else
local a, b = string.match(${raw}, '^(%d+):(%d+)$')
${s}, ${c} = tonumber(a), tonumber(b)
end`;
}

function decodeWindowOld(kind: PolicyKind, raw: string, s: string, c: string): string {
  const unit = kind === 'quota' ? '60000' : 'w';
  return `local x = tonumber(${raw})
if x then
local k = x / (limit + 1)
k = k - k % 1
${s}, ${c} = k * ${unit}, x - k * (limit + 1)
else
local a, b = string.match(${raw}, '^(%d+):(%d+)$')
${s}, ${c} = tonumber(a), tonumber(b)
end`;
}

function decodeSlidingNew(raw: string): string {
  return `local x = tonumber(${raw})
if x then
local radix = 4398046511104 / w
local _, e = math.frexp(radix - radix % 1)
e = (53 - e) / 2
radix = math.ldexp(1, e - e % 1)
local q = x / radix
q = q - q % 1
np = x - q * radix
local k = q / radix
k = k - k % 1
nc = q - k * radix
ns = k * w
else
local a, b, cc = string.match(${raw}, '^(%d+):(%d+):(%d+)$')
ns, nc, np = tonumber(a), tonumber(b), tonumber(cc)
end`;
}

function decodeSlidingOld(raw: string): string {
  return `local x = tonumber(${raw})
if x then
local q = x / (limit + 1)
q = q - q % 1
op = x - q * (limit + 1)
local k = q / (limit + 1)
k = k - k % 1
oc = q - k * (limit + 1)
os = k * w
else
local a, b, cc = string.match(${raw}, '^(%d+):(%d+):(%d+)$')
os, oc, op = tonumber(a), tonumber(b), tonumber(cc)
end`;
}

/** The kind's parameters a migrate block reads, as its fragment names them, from ARGV. */
function paramLine(kind: PolicyKind, arg: (j: number) => string): string {
  switch (kind) {
    case 'fixedWindow':
    case 'slidingWindow':
      return `local limit, w = tonumber(${arg(0)}), tonumber(${arg(1)})`;
    case 'quota':
      return `local limit = tonumber(${arg(0)})`;
    case 'slidingWindowLog':
      return `local w = tonumber(${arg(1)})`;
    default:
      return `local per_ms = tonumber(${arg(2)})`;
  }
}

/** Log units in (t - w, +inf] of `key`, into `into`. */
function logUnits(key: string, into: string): string {
  return `do
local newest = redis.call('ZRANGE', ${key}, -1, -1)
if newest[1] then
local b, c = string.match(newest[1], '^(%d+):(%d+)$')
local first = redis.call('ZRANGEBYSCORE', ${key}, '(' .. fmt('%.17g', t - w), '+inf', 'LIMIT', 0, 1)
if first[1] then
${into} = tonumber(b) + tonumber(c) - tonumber(string.match(first[1], '^(%d+):'))
end
end
end`;
}

/**
 * Before policy `kind`'s @eval: the stricter of its 0.1 state (`old`) and its 1.0 state
 * (`key`) onto `key` (policies/migrate.ts `stricterState` is the reference).
 */
export function premerge(
  kind: PolicyKind,
  key: string,
  old: string,
  arg: (j: number) => string,
): string[] {
  const head = ['do', paramLine(kind, arg)];
  switch (kind) {
    case 'fixedWindow':
    case 'quota':
      return [
        ...head,
        `local o = redis.call('GET', ${old})`,
        'if o then',
        'local os, oc, ns, nc',
        'do',
        decodeWindowOld(kind, 'o', 'os', 'oc'),
        'end',
        `local r = redis.call('GET', ${key})`,
        'if r then',
        decodeWindowNew(kind, 'r', 'ns', 'nc'),
        'end',
        'if not ns or os > ns or (os == ns and oc > nc) then',
        `local px = redis.call('PTTL', ${old})`,
        'if px > 0 then',
        `redis.call('SET', ${key}, fmt('%.17g', os) .. ':' .. fmt('%.17g', oc), 'PX', px)`,
        'end',
        'end',
        'end',
        'end',
      ];
    case 'slidingWindow':
      return [
        ...head,
        `local o = redis.call('GET', ${old})`,
        'if o then',
        'local os, oc, op, ns, nc, np',
        'do',
        decodeSlidingOld('o'),
        'end',
        `local r = redis.call('GET', ${key})`,
        'if r then',
        decodeSlidingNew('r'),
        'end',
        'local ms, mc, mp = os, oc, op',
        'if ns then',
        'if ns == os then',
        'ms, mc, mp = ns, math.max(nc, oc), math.max(np, op)',
        'elseif ns > os then',
        'ms, mc, mp = ns, nc, np',
        'if ns - os == w then mp = math.max(np, oc) end',
        'elseif os - ns == w then',
        'mp = math.max(op, nc)',
        'end',
        'end',
        'if ms ~= ns or mc ~= nc or mp ~= np then',
        `local px = math.max(redis.call('PTTL', ${old}), redis.call('PTTL', ${key}))`,
        'if px > 0 then',
        `redis.call('SET', ${key}, fmt('%.17g', ms) .. ':' .. fmt('%.17g', mc) .. ':' .. fmt('%.17g', mp), 'PX', px)`,
        'end',
        'end',
        'end',
        'end',
      ];
    case 'slidingWindowLog':
      return [
        ...head,
        'local un, uo = 0, 0',
        logUnits(key, 'un'),
        logUnits(old, 'uo'),
        'if uo > un then',
        `local px = redis.call('PTTL', ${old})`,
        'if px > 0 then',
        `redis.call('ZUNIONSTORE', ${key}, 1, ${old})`,
        `redis.call('PEXPIRE', ${key}, px)`,
        'end',
        'end',
        'end',
      ];
    default:
      // tokenBucket, leakyBucket: the later arrival time.
      return [
        ...head,
        `local o = redis.call('GET', ${old})`,
        'if o then',
        'local ot, ok, nt, nk, npm',
        'local x = tonumber(o)',
        'if x then',
        'ot = x / per_ms',
        'ot = ot - ot % 1',
        'ok = x - ot * per_ms',
        'else',
        `local a, b = string.match(o, '^(%d+):(%d+)$')`,
        'ot, ok = tonumber(a), tonumber(b)',
        'end',
        `local r = redis.call('GET', ${key})`,
        'if r then',
        'local y = tonumber(r)',
        'if y then',
        'nt, nk, npm = y, 0, per_ms',
        'else',
        `local a, b, c = string.match(r, '^(%d+):(%d+):(%d+)')`,
        'nt, nk, npm = tonumber(a), tonumber(b), tonumber(c)',
        'end',
        'end',
        'if not nt or ot + ok / per_ms > nt + nk / npm then',
        `local px = redis.call('PTTL', ${old})`,
        'if px > 0 then',
        'if ok == 0 then',
        `redis.call('SET', ${key}, ot, 'PX', px)`,
        'else',
        `redis.call('SET', ${key}, fmt('%.17g', ot) .. ':' .. fmt('%.17g', ok) .. ':' .. fmt('%.17g', per_ms), 'PX', px)`,
        'end',
        'end',
        'end',
        'end',
        'end',
      ];
  }
}

/**
 * After a write to policy `kind`'s key: its state in 0.1's format onto its 0.1 key, with the
 * key's expiry (deleted when the key is gone).
 */
export function mirror(
  kind: PolicyKind,
  key: string,
  old: string,
  arg: (j: number) => string,
): string[] {
  const head = ['do', paramLine(kind, arg)];
  if (kind === 'slidingWindowLog') {
    return [
      ...head,
      `redis.call('ZUNIONSTORE', ${old}, 1, ${key})`,
      `local px = redis.call('PTTL', ${key})`,
      `if px > 0 then redis.call('PEXPIRE', ${old}, px) end`,
      'end',
    ];
  }
  const encode: string[] = [];
  switch (kind) {
    case 'fixedWindow':
    case 'quota': {
      const unit = kind === 'quota' ? '60000' : 'w';
      encode.push(
        'local s, c',
        decodeWindowNew(kind, 'r', 's', 'c'),
        `v = s / ${unit} * (limit + 1) + c`,
        `if s % ${unit} ~= 0 or c > limit or v >= ${TWO53} then`,
        `v = fmt('%.17g', s) .. ':' .. fmt('%.17g', c)`,
        'end',
      );
      break;
    }
    case 'slidingWindow':
      encode.push(
        'local ns, nc, np',
        decodeSlidingNew('r'),
        'v = (ns / w * (limit + 1) + nc) * (limit + 1) + np',
        `if nc > limit or np > limit or v >= ${TWO53} then`,
        `v = fmt('%.17g', ns) .. ':' .. fmt('%.17g', nc) .. ':' .. fmt('%.17g', np)`,
        'end',
      );
      break;
    default:
      // Buckets: ticks of another rate (an override's) rescaled to the policy's, rounded up.
      encode.push(
        'local tat, ticks, pm',
        'local y = tonumber(r)',
        'if y then',
        'tat, ticks, pm = y, 0, per_ms',
        'else',
        `local a, b, c = string.match(r, '^(%d+):(%d+):(%d+)')`,
        'tat, ticks, pm = tonumber(a), tonumber(b), tonumber(c)',
        'end',
        'if ticks > 0 and pm ~= per_ms then',
        'local x = ticks * per_ms',
        `if x < ${TWO53} then`,
        'local q = x / pm',
        'q = q - q % 1',
        'if q * pm > x then q = q - 1 elseif (q + 1) * pm <= x then q = q + 1 end',
        'if q * pm < x then q = q + 1 end',
        'ticks = q',
        'else',
        'ticks = per_ms',
        'end',
        'if ticks == per_ms then tat, ticks = tat + 1, 0 end',
        'end',
        'v = tat * per_ms + ticks',
        `if v >= ${TWO53} then`,
        `v = fmt('%.17g', tat) .. ':' .. fmt('%.17g', ticks)`,
        'end',
      );
  }
  return [
    ...head,
    `local r = redis.call('GET', ${key})`,
    'if r then',
    'local v',
    'do',
    ...encode,
    'end',
    `local px = redis.call('PTTL', ${key})`,
    `if px > 0 then redis.call('SET', ${old}, v, 'PX', px) end`,
    'else',
    `redis.call('DEL', ${old})`,
    'end',
    'end',
  ];
}
