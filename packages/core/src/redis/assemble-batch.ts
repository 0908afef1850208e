// The batch script (../policies/batch.lua says how it runs): the one-call body of assemble.ts,
// the same text, as a function of a call's KEYS and ARGV offsets, with its Redis commands on
// string state turned into the run's cache.
import { LUA_SOURCES } from '../lua.generated.js';
import type { PolicyKind } from '../policies/kinds.js';
import {
  argCount,
  callBody,
  type Fragment,
  fragmentOf,
  helpersFor,
  IN_BATCH,
  type Layout,
  label,
  section,
} from './assemble.js';

/**
 * The one-call body as a batch runs it (batch.lua says why): TIME becomes the batch's one read,
 * string state goes through the run's cache (GET, SET … PX or SET then PEXPIREAT, INCRBY and
 * DEL of a key become reads of kval or kget, kset, sums into kval and kinc, and kdel) and any
 * other command on a key through kcall.
 * Fails at assembly when a fragment calls Redis in a shape this does not know, rather than let a
 * command bypass the cache.
 */
function cached(body: string, memos: Map<string, string>): string {
  // TIME at most once per batch: read before the loop when any call needs it (batch.lua), and
  // turned into ms there, so a call takes batch_time as it is.
  const reads = body.split("redis.call('TIME')").length - 1;
  if (reads !== 1) throw new Error(`compose.lua: expected one TIME read, found ${reads}`);
  const clock = /( *)local clock = redis\.call\('TIME'\)\n[\s\S]*?\n *time = [^\n]+/;
  if (!clock.test(body)) throw new Error('compose.lua: expected TIME, then time = its ms');
  // Inline what a call does most (a Lua call costs more than its work, callgrind): a parameter
  // already parsed this run, a key already read, an INCRBY added up; the helpers otherwise.
  const out = body
    .replace(clock, '$1time = batch_time')
    .replace(/^local fmt = string\.format\n/m, '')
    .replace(/tonumber\((ARGV\[[^\]]+\])\)/g, '(parsed[$1] or num($1))')
    .replace(
      /local (\w+) = redis\.call\('GET', ([^,()]+)\)/g,
      'local $1 = kval[$2]\nif $1 == nil then $1 = kget($2) end',
    )
    .replace(/redis\.call\('GET', ([^,()]+)\)/g, 'kget($1)')
    .replace(/redis\.call\('DEL', ([^,()]+)\)/g, 'kdel($1)')
    // A write at an absolute expiry, two lines: `redis.call('SET', key, value)`, then
    // `redis.call('PEXPIREAT', key, at)` (SET … PXAT would need Redis 6.2).
    .replace(
      /redis\.call\('SET', ([^,()]+), ([^\n]+)\)\n\s*redis\.call\('PEXPIREAT', \1, ([^\n]+)\)$/gm,
      "kset($1, $2, $3, 'PEXPIREAT')",
    )
    // One write per line, its expiry last: `redis.call('SET', key, value, 'PX', ms)`.
    .replace(/redis\.call\('SET', ([^,()]+), (.+), 'PX', (.+)\)$/gm, "kset($1, $2, $3, 'PX')")
    .replace(
      /redis\.call\('INCRBY', ([^,()]+), (\w+)\)$/gm,
      'kval[$1] = kval[$1] + $2\nif kpx[$1] == nil then kinc[$1] = (kinc[$1] or 0) + $2 end',
    )
    .replace(/redis\.call\('(Z[A-Z]+|PEXPIRE)', key\b/g, "kcall('$1', key")
    // kset's common case inline: an expiry Redis takes (an integer ms ≥ 1) is only recorded.
    // An expiry that is an expression (`ttl1 + grace`) is computed once, into a local of its own.
    .replace(
      /^(\s*)kset\(([^,()]+), (.+), ([^,]+), '(PX|PEXPIREAT)'\)$/gm,
      (_, pad: string, key: string, value: string, expr: string, unit: string) => {
        const bind = !/^\w+$/.test(expr);
        const px = bind ? 'kms' : expr;
        const inner = bind ? `${pad}  ` : pad;
        return (
          (bind ? `${pad}do\n${inner}local kms = ${expr}\n` : '') +
          `${inner}if ${px} ~= ${px} or ${px} < 1 or ${px} % 1 ~= 0 then\n` +
          `${inner}  kset(${key}, ${value}, ${px}, '${unit}')\n${inner}else\n` +
          `${inner}  kval[${key}] = ${value}\n` +
          `${inner}  kpx[${key}] = ${unit === 'PX' ? '' : '-'}${px}\n${inner}end` +
          (bind ? `\n${pad}end` : '')
        );
      },
    );
  const left = /redis\.call\([^)]*\)?/.exec(out);
  if (left !== null) throw new Error(`batch.lua: no cache rule for ${left[0]}`);
  return memoRadix(out, memos);
}

/**
 * A window kind's radix depends on its window alone, and costs two calls into Lua's math library
 * (frexp, ldexp: more than the rest of its arithmetic, callgrind): in a batch it is computed once
 * per window length and run, in a table of the run; `memos` names one table per formula (`one`
 * and `many` share it).
 */
function memoRadix(body: string, memos: Map<string, string>): string {
  const out = body.replace(
    /^( *)local radix = (4398046511104 \/ (\w+))\n([\s\S]*?)\n *(radix = math\.ldexp\([^\n]+\))$/gm,
    (_, pad: string, first: string, w: string, middle: string, last: string) => {
      const formula = `${first}\n${middle.replace(/^ +/gm, '')}\n${last}`;
      let memo = memos.get(formula);
      if (memo === undefined) {
        memo = `radix_memo${memos.size + 1}`;
        memos.set(formula, memo);
      }
      const inner = [`radix = ${first}`, ...middle.split('\n').map((l) => l.trim()), last]
        .map((l) => `${pad}  ${l}`)
        .join('\n');
      return (
        `${pad}local radix = ${memo}[${w}]\n${pad}if radix == nil then\n${inner}\n` +
        `${pad}  ${memo}[${w}] = radix\n${pad}end`
      );
    },
  );
  // A window fragment whose radix lines changed shape would run unmemoized: still exact, but
  // slower without a word. Fail at assembly instead, as the cache rules do.
  const bare = /^ *local radix = (?!radix_memo)/m.exec(out);
  if (bare !== null) throw new Error('assemble-batch.ts: a radix the batch does not memoize');
  return out;
}

/**
 * A window kind's admission raises its key by `ws<n>` (the cost, times the radix for a sliding
 * window) to the value its fragment computed (`wa<n>`: the value read plus `ws<n>`, the
 * fragments' rule): the cache takes that number, where `kval + ws` would convert the string GET
 * read once more (Lua's `strtod`, about 1k instructions, callgrind). In `one`, a fixedWindow or
 * quota key's first INCRBY of the run is the cost's own argument string, written out as it came,
 * where a number is printed first (`%.17g` before Redis 7.2, about 1.9k; assemble.ts
 * countFromArgument does the same for the one-call script); a sliding window's, the digits of
 * cost × radix, formatted once per run (batch.lua `digits`). A second INCRBY of a key adds to it
 * as a number (Lua converts the string). `many`'s fixedWindow or quota cost is times `mult`: a
 * number.
 */
function countAsWritten(body: string, kinds: readonly PolicyKind[], inOne: boolean): string {
  let out = body;
  kinds.forEach((kind, i) => {
    if (kind !== 'fixedWindow' && kind !== 'quota' && kind !== 'slidingWindow') return;
    const n = i + 1;
    const sum = `kval[key] = kval[key] + ws${n}\nif kpx[key] == nil then kinc[key] = (kinc[key] or 0) + ws${n} end`;
    if (!out.includes(sum)) throw new Error(`${kind}: expected the cached INCRBY of ws${n}`);
    const first =
      kind === 'slidingWindow'
        ? `kinc[key] and kinc[key] + ws${n} or printed[ws${n}] or digits(ws${n})`
        : inOne
          ? `kinc[key] and kinc[key] + ws${n} or ARGV[ab + 2]`
          : `(kinc[key] or 0) + ws${n}`;
    out = out.replace(sum, `kval[key] = wa${n}\nif kpx[key] == nil then kinc[key] = ${first} end`);
  });
  return out;
}

// The kinds whose n identical calls at one instant are one call of n times the cost: each
// admission adds its cost to a count (fixedWindow, slidingWindow, quota) or to a bucket's level
// (tokenBucket, leakyBucket), and admits while the sum stays within the limit. Not the log (a
// member per call). A penalty (blockFor) is fine: `many` sets no block, and a run that is
// denied, blocked or not, runs one by one.
const REPEATABLE: ReadonlySet<PolicyKind> = new Set([
  'fixedWindow',
  'slidingWindow',
  'quota',
  'tokenBucket',
  'leakyBucket',
]);

/** Whether a batch may send identical calls of these kinds as one entry (batch.lua, Repeats). */
export function repeatable(kinds: readonly PolicyKind[]): boolean {
  return kinds.every((k) => REPEATABLE.has(k));
}

// `many`: the body with its cost times `mult`, answering true when every policy admits (having
// written what the n calls would have) and false otherwise (having written nothing: no block).
const IN_MANY: Layout = {
  ...IN_BATCH,
  reply: (fields) => (fields.startsWith('1, ') ? 'return true' : 'return false'),
  penalize: false,
};

const NO_MANY = 'local function many()\nreturn false\nend';

/** `many` of batch.lua: for kinds that cannot repeat, it says no, and the calls run one by one. */
function manyOf(
  fragments: readonly Fragment[],
  kinds: readonly PolicyKind[],
  blocking: readonly boolean[],
  shadowing: readonly boolean[],
  memos: Map<string, string>,
): string {
  // Shadowed policies beside enforced ones are charged apart from them: no one `true` for a run.
  if (!repeatable(kinds) || shadowing.some(Boolean)) return NO_MANY;
  const body = cached(callBody(fragments, kinds, blocking, IN_MANY).join('\n'), memos);
  const cost = 'local cost = (parsed[ARGV[ab + 2]] or num(ARGV[ab + 2]))';
  if (!body.includes(cost)) throw new Error('compose.lua: expected the cost line');
  const counted = countAsWritten(body, kinds, false);
  return `local function many(kb, ab, mult)\n${counted.replace(cost, `${cost} * mult`)}\nend`;
}

/**
 * Assembles the batch script for `kinds` (batch.lua says how): the one-call script's body, from
 * the same fragments, as a function of the call's KEYS and ARGV offsets, run once per call; and
 * as `many`, for runs of identical calls.
 */
export function assembleBatchScript(
  kinds: readonly PolicyKind[],
  blocking: readonly boolean[] = [],
  shadowing: readonly boolean[] = [],
  overrides = false,
): string {
  const fragments = kinds.map(fragmentOf);
  const memos = new Map<string, string>();
  const body = cached(
    callBody(fragments, kinds, blocking, IN_BATCH, shadowing, overrides).join('\n'),
    memos,
  );
  const many = overrides ? NO_MANY : manyOf(fragments, kinds, blocking, shadowing, memos);
  const one = countAsWritten(body, kinds, true);
  // With overrides, one more key per policy; no `many` (the client's replay of a run of repeats
  // runs the policies' own parameters, which an override would replace).
  const keys = kinds.length + blocking.filter(Boolean).length + (overrides ? kinds.length : 0);
  const fill = (text: string) =>
    text
      .replaceAll('PER_CALL_KEYS', String(keys))
      .replaceAll('PER_CALL_ARGS', String(argCount(kinds, blocking)));
  const code = [
    ...helpersFor(fragments),
    ...[...memos.values()].map((m) => `local ${m} = {}`),
    fill(section(LUA_SOURCES.batch!, 'head')),
    one,
    section(LUA_SOURCES.batch!, 'tail'),
    many,
    fill(section(LUA_SOURCES.batch!, 'loop')),
  ].join('\n');
  // math.floor, math.max and string.format as locals of the run (`cached` took the prelude's
  // fmt out): a local saves each call a global and a field lookup (callgrind). So do KEYS, ARGV,
  // redis, tonumber and pcall, which every call reads: an upvalue or local instead of a lookup in
  // the globals table.
  return [
    `-- Floodgate batch script: ${label(kinds, blocking, shadowing, overrides)}`,
    'local mfloor, mmax, fmt = math.floor, math.max, string.format',
    'local KEYS, ARGV, redis, tonumber, pcall = KEYS, ARGV, redis, tonumber, pcall',
    code.replaceAll('math.floor(', 'mfloor(').replaceAll('math.max(', 'mmax('),
  ]
    .join('\n')
    .concat('\n');
}
