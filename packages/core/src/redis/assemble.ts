// Assembling a limit script's text from the fragments in ../policies/*.lua (inlined by
// scripts/gen-lua.mjs): the one-call script per combination of kinds. assemble-batch.ts makes
// the batch script from the same body; lua.ts compiles and caches both.
import { LUA_SOURCES } from '../lua.generated.js';
import type { PolicyKind } from '../policies/kinds.js';
import { POLICY_TABLE } from '../policies/table.js';
import { mirror, premerge } from './assemble-migrate.js';
import {
  overrideBlocks,
  overrideFields,
  overrideParams,
  overrideReads,
} from './assemble-overrides.js';
import { inlineHelpers } from './inline.js';

export interface Fragment {
  readonly params: readonly string[];
  readonly eval: string;
  readonly refund: string;
  readonly write: string;
  readonly shaping: boolean;
}

/** Text of `source` after the line `-- @<marker>` up to the next `-- @` line. */
export function section(source: string, marker: string): string {
  const start = source.indexOf(`\n-- @${marker}`);
  if (start < 0) return '';
  const body = source.slice(source.indexOf('\n', start + 1) + 1);
  const end = body.indexOf('\n-- @');
  return (end < 0 ? body : body.slice(0, end + 1)).trimEnd();
}

export function fragmentOf(kind: PolicyKind): Fragment {
  const row = POLICY_TABLE[kind];
  let source = LUA_SOURCES[row.lua]!;
  const use = /\n-- @use (\w+)/.exec(source);
  if (use !== null) source = LUA_SOURCES[use[1]!]!;
  const params = /\n-- @params ([\w ]+)/.exec(source)![1]!.trim().split(/\s+/);
  // `-- @write <name>`: the write common.lua holds under that name, shared by several kinds.
  const shared = /\n-- @write (\w+)/.exec(source);
  return {
    params,
    eval: inlineHelpers(section(source, 'eval')),
    refund: inlineHelpers(section(source, 'refund')),
    write: inlineHelpers(
      shared === null
        ? section(source, 'write')
        : section(LUA_SOURCES.common!, `write ${shared[1]}`),
    ),
    shaping: row.shaping,
  };
}

// A script holds only the helpers its fragments still call (redis/inline.ts writes out most).
const HELPERS = ['floor_div', 'ceil_div'] as const;
// ceil_div calls floor_div: whoever needs the one needs both.
const NEEDS: Record<(typeof HELPERS)[number], readonly string[]> = {
  floor_div: ['floor_div'],
  ceil_div: ['floor_div', 'ceil_div'],
};

/**
 * Where a call's KEYS and ARGV sit (from 1 in the one-call script, after offsets in a batch), and
 * how it answers: `reply` is the statement that returns a decision's fields (five per policy).
 */
export interface Layout {
  key(n: number): string;
  arg(i: number): string;
  reply(fields: string): string;
  /** Whether a denial by a blocking policy sets its block (all but the batch's `many`). */
  readonly penalize?: boolean;
}
const ONE_CALL: Layout = {
  key: (n) => `KEYS[${n}]`,
  arg: (i) => `ARGV[${i}]`,
  reply: (fields) => `return { ${fields}, time }`,
};
// kb, ab: the call's offsets into KEYS and ARGV, set by the batch loop; `flat` and `nf`: the
// batch's one reply array and its length (batch.lua's words). A decision goes into `flat` field
// by field, no table of its own: Redis converts one array, not one per call, into the reply,
// and the batch's TIME goes once, at its end.
export const IN_BATCH: Layout = {
  key: (n) => `KEYS[kb + ${n}]`,
  arg: (i) => `ARGV[ab + ${i}]`,
  reply: (fields) =>
    `${fields
      .split(', ')
      .map((f, j) => `flat[nf + ${j + 1}] = ${f}`)
      .join('\n')}\nnf = nf + ${fields.split(', ').length}\nreturn`,
};

/** The helpers the fragments of `kinds` call, each once. */
export function helpersFor(fragments: readonly Fragment[]): string[] {
  const code = fragments.map((f) => `${f.eval}\n${f.refund}\n${f.write}`).join('\n');
  const wanted = new Set<string>();
  for (const h of HELPERS) if (code.includes(`${h}(`)) for (const n of NEEDS[h]) wanted.add(n);
  return HELPERS.filter((h) => wanted.has(h)).map((h) =>
    section(LUA_SOURCES.common!, `helper ${h}`),
  );
}

/** One call's work, from the prelude to its `return`s: the one-call script's text after its helpers. */
export function callBody(
  fragments: readonly Fragment[],
  kinds: readonly PolicyKind[],
  blocking: readonly boolean[],
  at: Layout,
  shadowing: readonly boolean[] = [],
  overrides = false,
  migrate = false,
  costs = false,
): string[] {
  const out = [
    section(LUA_SOURCES.compose!, 'prelude').replace(/ARGV\[(\d+)\]/g, (_, i) => at.arg(Number(i))),
  ];
  // Per-policy costs (costs.ts): ARGV[2] is the list, signed in a settle.
  if (costs) out.push(...costList(at));
  // Overrides (assemble-overrides.ts): their keys come after the policies' and block keys.
  const overrideKey = kinds.length + blocking.filter(Boolean).length + 1;
  if (overrides) out.push(...overrideReads(kinds, kinds.map(storedCount), overrideKey, at));
  // ARGV[5..]: each fragment's parameters in turn, as many as its @params names; then each
  // blocking policy's blockFor in ms.
  const bases: number[] = [];
  let next = 5;
  for (const f of fragments) {
    bases.push(next);
    next += f.params.length;
  }
  const paramsOf = (f: Fragment, i: number, body: string) => {
    const used = f.params
      .map((p, j) => [p, j] as const)
      .filter(([p]) => new RegExp(`\\b${p}\\b`).test(body));
    if (used.length === 0) return [];
    const names = used.map(([p]) => p).join(', ');
    const values = used.map(([, j]) => `tonumber(${at.arg(bases[i]! + j)})`).join(', ');
    const line = `local ${names} = ${values}`;
    if (!overrides) return [line];
    const own = used.filter(([, j]) => j < paramCount(kinds[i]!));
    return own.length === 0 ? [line] : [line, ...overrideParams(i, own, storedCount(kinds[i]!))];
  };
  const fill = (f: Fragment, body: string, i: number) =>
    forcing(body.replaceAll('@', String(i + 1)).replaceAll('SHAPING', String(f.shaping)), costs);
  // Migrating keys from 0.1 (assemble-migrate.ts): each policy's 0.1 key, then each blocking
  // policy's 0.1 block key, after the override keys.
  const nBlocking = blocking.filter(Boolean).length;
  const legacyFirst = kinds.length + nBlocking + (overrides ? kinds.length : 0) + 1;
  const legacyKey = (i: number) => at.key(legacyFirst + i);
  const baseArg = (i: number) => (j: number) => at.arg(bases[i]! + j);
  const mirrored = (i: number) =>
    migrate ? mirror(kinds[i]!, at.key(i + 1), legacyKey(i), baseArg(i)) : [];
  fragments.forEach((f, i) => {
    const n = i + 1;
    if (migrate) out.push(...premerge(kinds[i]!, at.key(n), legacyKey(i), baseArg(i)));
    out.push(
      `local ok${n}, rem${n}, rst${n}, rty${n}, dly${n}, nrem${n}, ttl${n} = false, 0, 0, 0, 0, 0, 0`,
      `local wa${n}, wb${n}, ws${n}`,
      'do',
      `local key = ${at.key(n)}`,
      ...(costs ? ownCost(n) : []),
      ...paramsOf(f, i, `${f.eval}\n${f.refund}`),
      fill(f, f.eval, i),
      // A premerged key may hold a string form: no INCRBY on it.
      ...(migrate && f.write.includes("'INCRBY'") ? [`ws${n} = nil`] : []),
      // limiter.refund: the fragment's @refund, on the state its @eval just read; and a
      // settle's negative cost.
      costs
        ? `if mode == 'refund' or (mode == 'settle' and sc[${n}] < 0) then`
        : `if mode == 'refund' then`,
      fill(f, f.refund, i),
      ...mirrored(i),
      'end',
      'end',
    );
  });
  // A settle ends before the blocks are read (it neither reads nor sets them).
  const settleAt = out.length;
  // Penalties (compose.lua): the block key of each blocking policy, after the policies' keys.
  const blocks = blockLayout(kinds.length, blocking, next);
  if (migrate) {
    blocks.forEach((b, j) => {
      b.legacy = legacyFirst + kinds.length + j;
    });
  }
  for (const b of blocks) {
    const n = b.policy + 1;
    out.push(
      `local blk${n} = 0`,
      'do',
      `local u = redis.call('GET', ${at.key(b.key)})`,
      ...(b.legacy === undefined
        ? []
        : [
            `local u2 = redis.call('GET', ${at.key(b.legacy)})`,
            // A block a 0.1 process set is folded onto the 1.0 block key (assemble-migrate.ts).
            'if u2 and (not u or tonumber(u2) > tonumber(u)) then',
            'u = u2',
            `local px = redis.call('PTTL', ${at.key(b.legacy)})`,
            `if px > 0 then redis.call('SET', ${at.key(b.key)}, u2, 'PX', px) end`,
            'end',
          ]),
      'if u then',
      'local left = tonumber(u) - t',
      `if left > 0 then blk${n} = left end`,
      'end',
      'end',
    );
  }
  // The policies a block may deny: the blocking ones, and with overrides every one.
  const holds = overrides ? kinds.map((_, i) => i) : blocks.map((b) => b.policy);
  if (overrides) out.push(...overrideBlocks(kinds.length, blocking));
  if (holds.length > 0) {
    const any = holds.map((i) => `blk${i + 1} > 0`).join(' or ');
    out.push(`local blocked = mode ~= 'refund' and (${any})`, 'if blocked then');
    for (const i of holds) {
      const n = i + 1;
      out.push(
        `if blk${n} > 0 then`,
        `ok${n}, rem${n}, dly${n} = false, 0, 0`,
        `rst${n}, rty${n} = math.max(rst${n}, blk${n}), math.max(rty${n}, blk${n})`,
        'end',
      );
    }
    out.push('end');
  }
  const all = kinds.map((_, i) => `ok${i + 1}`).join(' and ');
  const reply = (fields: (n: number) => string) =>
    at.reply(
      kinds.map((_, i) => fields(i + 1) + (overrides ? overrideFields(i + 1) : '')).join(', '),
    );
  const written = (f: Fragment, i: number) => [
    'do',
    `local key = ${at.key(i + 1)}`,
    ...paramsOf(f, i, f.write),
    fill(f, f.write, i),
    'end',
    ...mirrored(i),
  ];
  // With per-policy costs, a policy charged 0 keeps its state (compose.ts decideAll).
  const write = (f: Fragment, i: number) =>
    costs ? [`if sc[${i + 1}] > 0 then`, ...written(f, i), 'end'] : written(f, i);
  // A settle: each positive cost's forced charge written, blocks neither read nor set.
  if (costs) out.splice(settleAt, 0, ...settleTail(fragments, write, reply));
  if (shadowing.some(Boolean)) {
    out.push(...mixedTail(fragments, blocks, holds, shadowing, at, write, reply));
    return out;
  }
  out.push(`if mode == 'limit' and ${all} then`);
  fragments.forEach((f, i) => {
    out.push(...write(f, i));
  });
  out.push(
    reply((n) => `1, nrem${n}, ttl${n}, 0, dly${n}`),
    'end',
  );
  if (blocks.length > 0 && at.penalize !== false) {
    // A denial by a blocking policy sets its block, in the run that denied (not while blocked).
    out.push(`if mode == 'limit' and not blocked then`, ...penalties(blocks, at));
    out.push('end');
  }
  out.push(...uncharged(reply));
  return out;
}

type Block = { policy: number; key: number; arg: number; legacy?: number };

/** The cost list of a per-policy-costs script: `sc[n]` is policy n's (compose.lua ARGV[2]). */
function costList(at: Layout): string[] {
  return [
    'local sc = {}',
    `for c in string.gmatch(${at.arg(2)}, '%-?%d+') do`,
    'sc[#sc + 1] = tonumber(c)',
    'end',
  ];
}

/**
 * Policy n's own cost, inside its block: a peek's 1; in a settle the size of its signed cost,
 * forced when positive (charged past capacity: the `force` of the fragments' `--[[costs:…]]`).
 */
function ownCost(n: number): string[] {
  return [
    `local cost, force = sc[${n}], false`,
    `if mode == 'peek' then`,
    'cost = 1',
    `elseif mode == 'settle' then`,
    'if cost < 0 then',
    'cost = -cost',
    'elseif cost > 0 then',
    'force = true',
    'end',
    'end',
  ];
}

/**
 * A fragment's `--[[costs:…]]` markers (its capacity test, forced in a settle, and a bucket's
 * debt under a cost of 0): their text in a per-policy-costs script; elsewhere they go, so the
 * scripts of calls with one cost are byte for byte what they were before.
 */
function forcing(body: string, costs: boolean): string {
  return body.replace(/--\[\[costs:(.*?)\]\]/g, costs ? '$1' : '');
}

/**
 * A settle's writes (`write` skips a cost ≤ 0: a negative one was refunded in its block), then
 * its reply.
 */
function settleTail(
  fragments: readonly Fragment[],
  write: (f: Fragment, i: number) => string[],
  reply: (fields: (n: number) => string) => string,
): string[] {
  const out = [`if mode == 'settle' then`];
  fragments.forEach((f, i) => {
    out.push(...write(f, i));
  });
  out.push(
    reply((n) => `ok${n} and 1 or 0, rem${n}, rst${n}, rty${n}, 0`),
    'end',
  );
  return out;
}

/** The replies of a call that charged nothing: a peek's (with its delays), and a denial's. */
function uncharged(reply: (fields: (n: number) => string) => string): string[] {
  return [
    `if mode == 'peek' then`,
    reply((n) => `ok${n} and 1 or 0, rem${n}, rst${n}, rty${n}, dly${n}`),
    'end',
    reply((n) => `ok${n} and 1 or 0, rem${n}, rst${n}, rty${n}, 0`),
  ];
}

/** Sets the block of each of `blocks` whose policy denied (compose.lua, Penalties). */
function penalties(blocks: readonly Block[], at: Layout): string[] {
  const out: string[] = [];
  for (const b of blocks) {
    const n = b.policy + 1;
    out.push(
      `if not ok${n} then`,
      `local ms = tonumber(${at.arg(b.arg)})`,
      `redis.call('SET', ${at.key(b.key)}, t + ms, 'PX', ms + grace)`,
      ...(b.legacy === undefined
        ? []
        : [`redis.call('SET', ${at.key(b.legacy)}, t + ms, 'PX', ms + grace)`]),
      `rem${n} = 0`,
      `rst${n}, rty${n} = math.max(rst${n}, ms), math.max(rty${n}, ms)`,
      'end',
    );
  }
  return out;
}

/**
 * The end of a call whose limiter shadows some policies beside enforced ones (compose.ts
 * evaluateAll is the reference): the enforced policies decide, charge and block among
 * themselves (okE, blockedE); the shadowed ones are charged and block as if all were enforced
 * (okA, blocked). Penalties come first: a shadowed policy may block in a call that charges.
 */
function mixedTail(
  fragments: readonly Fragment[],
  blocks: readonly Block[],
  holds: readonly number[],
  shadowing: readonly boolean[],
  at: Layout,
  write: (f: Fragment, i: number) => string[],
  reply: (fields: (n: number) => string) => string,
): string[] {
  const enforced = fragments.map((_, i) => i).filter((i) => shadowing[i] !== true);
  const shadowed = fragments.map((_, i) => i).filter((i) => shadowing[i] === true);
  const okE = enforced.map((i) => `ok${i + 1}`).join(' and ');
  const okS = shadowed.map((i) => `ok${i + 1}`).join(' and ');
  const out = [`local okE = ${okE}`, `local okA = okE and ${okS}`];
  if (blocks.length > 0 && at.penalize !== false) {
    const mine = (b: Block) => shadowing[b.policy] !== true;
    const ownBlocks = blocks.filter(mine);
    const ownHolds = holds.filter((i) => shadowing[i] !== true);
    const anyE = ownHolds.map((i) => `blk${i + 1} > 0`).join(' or ') || 'false';
    out.push(`local blockedE = mode ~= 'refund' and (${anyE})`, `if mode == 'limit' then`);
    out.push('if not okE and not blockedE then', ...penalties(ownBlocks, at), 'end');
    const theirs = blocks.filter((b) => !mine(b));
    out.push('if not okA and not blocked then', ...penalties(theirs, at), 'end', 'end');
  }
  out.push(`if mode == 'limit' and okE then`);
  for (const i of enforced) out.push(...write(fragments[i]!, i));
  out.push('if okA then');
  for (const i of shadowed) out.push(...write(fragments[i]!, i));
  out.push('end');
  out.push(
    reply((n) =>
      shadowing[n - 1] !== true
        ? `1, nrem${n}, ttl${n}, 0, dly${n}`
        : [
            `(okA or ok${n}) and 1 or 0`,
            `okA and nrem${n} or rem${n}`,
            `okA and ttl${n} or rst${n}`,
            `okA and 0 or rty${n}`,
            `okA and dly${n} or 0`,
          ].join(', '),
    ),
    'end',
  );
  out.push(...uncharged(reply));
  return out;
}

/** Where each blocking policy's block key (KEYS) and blockFor (ARGV) sit, in policy order. */
function blockLayout(n: number, blocking: readonly boolean[], firstArg: number): Block[] {
  const out: Block[] = [];
  for (let i = 0; i < n; i++) {
    if (blocking[i] === true) {
      out.push({ policy: i, key: n + out.length + 1, arg: firstArg + out.length });
    }
  }
  return out;
}

/**
 * The first line's label: the kinds, a blocking one marked `(blockFor)`, a shadowed one (beside
 * enforced ones) `(shadow)`; `, with overrides` for a limiter with overrides.
 */
export function label(
  kinds: readonly PolicyKind[],
  blocking: readonly boolean[],
  shadowing: readonly boolean[] = [],
  overrides = false,
  migrate = false,
  costs = false,
): string {
  const list = kinds
    .map(
      (k, i) =>
        `${k}${blocking[i] === true ? ' (blockFor)' : ''}${shadowing[i] === true ? ' (shadow)' : ''}`,
    )
    .join(' + ');
  const text = overrides ? `${list}, with overrides` : list;
  const moved = migrate ? `${text}, migrating keys from 0.1` : text;
  return costs ? `${moved}, per-policy costs` : moved;
}

/** Up to how many policies the one-call script reads its common globals through locals. */
const GLOBALS_AS_LOCALS_UP_TO = 8;

/**
 * Assembles the script for a combination of kinds (compose.lua says how): straight-line code, no
 * dispatch table, no closures beyond the helpers its fragments call. Its first line names the
 * kinds: `-- Floodgate limit script: tokenBucket + fixedWindow`.
 */
export function assembleScript(
  kinds: readonly PolicyKind[],
  blocking: readonly boolean[] = [],
  shadowing: readonly boolean[] = [],
  overrides = false,
  migrate = false,
  costs = false,
): string {
  const fragments = kinds.map(fragmentOf);
  const head = `-- Floodgate limit script: ${label(kinds, blocking, shadowing, overrides, migrate, costs)}`;
  // The globals a run reads most, as locals: a register instead of a lookup in the globals
  // table per read (callgrind; the batch script does the same, assemble-batch.ts). Lua allows a
  // function 200 locals, and a policy declares ten: a script of many policies keeps the globals.
  const out = [head];
  if (kinds.length <= GLOBALS_AS_LOCALS_UP_TO) {
    out.push('local KEYS, ARGV, redis, tonumber = KEYS, ARGV, redis, tonumber');
  }
  out.push(...helpersFor(fragments));
  out.push(...callBody(fragments, kinds, blocking, ONE_CALL, shadowing, overrides, migrate, costs));
  return countFromArgument(`${out.join('\n')}\n`, kinds, costs);
}

/**
 * A fixedWindow or quota admission raises its key by the call's cost (`ws<n> = cost`): given
 * the cost's own argument string, INCRBY takes it as it came, where a number is printed first
 * (`%.17g` before Redis 7.2: 1.9k instructions of a lone call's ~57k, callgrind). Not with
 * per-policy costs, whose ARGV[2] is a list; the batch script sums the costs as numbers.
 */
function countFromArgument(script: string, kinds: readonly PolicyKind[], costs: boolean): string {
  if (costs) return script;
  let out = script;
  kinds.forEach((kind, i) => {
    if (kind !== 'fixedWindow' && kind !== 'quota') return;
    const write = `redis.call('INCRBY', key, ws${i + 1})`;
    if (!out.includes(write)) throw new Error(`${kind}: expected ${write}`);
    out = out.replace(write, "redis.call('INCRBY', key, ARGV[2])");
  });
  return out;
}

/** ARGV entries per call: mode, cost, now, deadline, each kind's parameters, each blockFor. */
export function argCount(kinds: readonly PolicyKind[], blocking: readonly boolean[] = []): number {
  let n = 4;
  for (const k of kinds) n += paramCount(k) + (POLICY_TABLE[k].perCall?.args ?? 0);
  for (const b of blocking) if (b) n++;
  return n;
}

/** How many of a kind's parameters its override states store (kinds.ts `overrideParams`). */
export function storedCount(kind: PolicyKind): number {
  const row = POLICY_TABLE[kind];
  return row.overrideParams ?? row.params;
}

/** How many of `Policy.params` a kind's fragment reads (its @params, less any per-call ones). */
export function paramCount(kind: PolicyKind): number {
  return POLICY_TABLE[kind].params;
}
