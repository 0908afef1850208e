import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isFloodgateError } from '../src/errors.js';
import {
  fixedWindow,
  leakyBucket,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { LUA_SOURCES } from '../src/lua.generated.js';
import type { PolicyKind } from '../src/policies/kinds.js';
import { POLICY_KINDS } from '../src/policies/kinds.js';
import { argCount, assembleScript } from '../src/redis/assemble.js';
import { assembleBatchScript } from '../src/redis/assemble-batch.js';
import { batchScriptFor } from '../src/redis/batch.js';
import { scriptFor, scriptForKinds } from '../src/redis/lua.js';
import { decodeScriptReply, encodeScriptArgs } from '../src/redis/protocol.js';

const core = fileURLToPath(new URL('..', import.meta.url));

describe('the generated Lua', () => {
  it('is in sync with lua/*.lua (gen-lua --check exits 0)', () => {
    const r = spawnSync(process.execPath, ['scripts/gen-lua.mjs', '--check'], {
      cwd: core,
      encoding: 'utf8',
    });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });

  it('the check really checks: a stale copy fails it, regenerating fixes it', () => {
    // On a copy of the generator's inputs, so the real files are never touched.
    const dir = mkdtempSync(join(tmpdir(), 'floodgate-lua-'));
    try {
      for (const sub of ['scripts', 'src'])
        cpSync(join(core, sub), join(dir, sub), { recursive: true });
      const generated = join(dir, 'src', 'lua.generated.ts');
      const check = () =>
        spawnSync(process.execPath, ['scripts/gen-lua.mjs', '--check'], {
          cwd: dir,
          encoding: 'utf8',
        });
      expect(check().status).toBe(0);
      writeFileSync(
        join(dir, 'src', 'policies', 'common.lua'),
        `${readFileSync(join(dir, 'src', 'policies', 'common.lua'), 'utf8')}\n-- edited\n`,
      );
      const stale = check();
      expect(stale.status).toBe(1);
      expect(stale.stderr).toContain('stale');
      execFileSync(process.execPath, ['scripts/gen-lua.mjs'], { cwd: dir });
      expect(check().status).toBe(0);
      expect(readFileSync(generated, 'utf8')).toContain('-- edited');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('holds common, compose, batch and one fragment per kind in POLICY_KINDS', () => {
    const stems = POLICY_KINDS.map((k) => k.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`));
    expect(Object.keys(LUA_SOURCES).sort()).toEqual(
      ['common', 'compose', 'batch', ...stems].sort(),
    );
  });
});

describe('one lean script per combination of kinds', () => {
  it('is straight-line code: no dispatch table, no closures but the helpers it calls', () => {
    for (const kind of POLICY_KINDS) {
      const source = scriptForKinds([kind]).source;
      expect(source).not.toContain('POLICIES');
      expect(source).not.toContain('replicate_commands');
      const functions = source.match(/function/g) ?? [];
      expect(functions.length, kind).toBeLessThanOrEqual(2);
      // Only this kind's fragment.
      for (const other of POLICY_KINDS.filter((k) => k !== kind)) {
        expect(source).not.toContain(`Floodgate limit script: ${other}\n`);
      }
    }
    // The helpers' assignments are written out (redis/inline.ts): the buckets call none, the
    // sliding window keeps the two inside longer expressions, the log needs none at all.
    for (const kind of ['tokenBucket', 'leakyBucket'] as const) {
      const source = scriptForKinds([kind]).source;
      expect(source).not.toMatch(/floor_div\(|ceil_div\(|math\.max\(|function/);
      expect(source).toContain('fd_q = fd_q - fd_q % 1');
    }
    expect(scriptForKinds(['slidingWindow']).source.match(/floor_div\(/g)).toHaveLength(3);
    expect(scriptForKinds(['fixedWindow']).source).not.toContain('ceil_div');
    expect(scriptForKinds(['slidingWindowLog']).source).not.toContain('function');
  });

  it('reads TIME only for the server clock or a deadline', () => {
    const source = scriptForKinds(['tokenBucket']).source;
    expect(source.match(/redis\.call\('TIME'\)/g)).toHaveLength(1);
    expect(source).toContain("if ARGV[3] == '' or ARGV[4] ~= '' then");
  });

  it('the batch script runs the one-call body, same text, at KEYS/ARGV offsets, TIME once', () => {
    const combos: PolicyKind[][] = [...POLICY_KINDS.map((k) => [k]), [...POLICY_KINDS]];
    for (const kinds of combos) {
      // The one-call script raises a fixedWindow or quota key by the cost's own argument
      // (assemble.ts countFromArgument), where the shared body has ws<n>: back to the body.
      let one = assembleScript(kinds);
      kinds.forEach((kind, i) => {
        if (kind === 'fixedWindow' || kind === 'quota') {
          one = one.replace(
            "redis.call('INCRBY', key, ARGV[2])",
            `redis.call('INCRBY', key, ws${i + 1})`,
          );
        }
      });
      const batch = assembleBatchScript(kinds);
      // Back to one call's layout and Redis commands for the run's cache and parsed numbers,
      // the batch holds the one-call script's body verbatim.
      const undone = batch
        .replace(/KEYS\[kb \+ (\d+)\]/g, 'KEYS[$1]')
        .replace(/ARGV\[ab \+ (\d+)\]/g, 'ARGV[$1]')
        .replace(/\(parsed\[(ARGV\[[^\]]+\])\] or num\(\1\)\)/g, 'tonumber($1)')
        .replace(
          /^(\s*)do\n\s*local kms = ([^\n]+)\n\s*if kms ~= kms or kms < 1 or kms % 1 ~= 0 then\n\s*kset\(([^\n]+), kms, ('PX'|'PEXPIREAT')\)\n\s*else\n[^\n]+\n[^\n]+\n\s*end\n\s*end$/gm,
          '$1kset($3, $2, $4)',
        )
        .replace(
          /^(\s*)if (\w+) ~= \2 or \2 < 1 or \2 % 1 ~= 0 then\n\s*(kset\([^\n]+\))\n\s*else\n[^\n]+\n[^\n]+\n\s*end$/gm,
          '$1$3',
        )
        .replace(
          /^(\s*)local (\w+) = kval\[([^\]]+)\]\n\s*if \2 == nil then \2 = kget\(\3\) end$/gm,
          "$1local $2 = redis.call('GET', $3)",
        )
        .replace(
          /^(\s*)kval\[(key)\] = kval\[\2\] \+ (\w+)\n\s*if kpx\[\2\] == nil then kinc\[\2\] = \(kinc\[\2\] or 0\) \+ \3 end$/gm,
          "$1redis.call('INCRBY', $2, $3)",
        )
        // A window admission's count as its fragment wrote it (wa<n>), its first INCRBY the
        // cost's argument (assemble-batch.ts countAsWritten).
        .replace(
          /^(\s*)kval\[(key)\] = wa(\d+)\n\s*if kpx\[\2\] == nil then kinc\[\2\] = (?:kinc\[\2\] and kinc\[\2\] \+ ws\3 or (?:ARGV\[2\]|printed\[ws\3\] or digits\(ws\3\))|\(kinc\[\2\] or 0\) \+ ws\3) end$/gm,
          "$1redis.call('INCRBY', $2, ws$3)",
        )
        .replace(/\bkget\(([^()]+)\)/g, "redis.call('GET', $1)")
        .replace(/\bkdel\(([^()]+)\)/g, "redis.call('DEL', $1)")
        .replace(
          /^(\s*)kset\((key|KEYS\[\d+\]), (.+), ([^,]+), 'PEXPIREAT'\)$/gm,
          "$1redis.call('SET', $2, $3)\n$1redis.call('PEXPIREAT', $2, $4)",
        )
        .replace(
          /\bkset\((key|KEYS\[\d+\]), (.+), ([^,]+), 'PX'\)$/gm,
          "redis.call('SET', $1, $2, 'PX', $3)",
        )
        .replace(/\bkcall\('/g, "redis.call('")
        // A window's radix, memoized per window length for the run.
        .replace(
          /^( *)local radix = radix_memo\d+\[(\w+)\]\n *if radix == nil then\n *radix = ([^\n]+)\n([\s\S]*?)\n *radix_memo\d+\[\2\] = radix\n *end$/gm,
          (_, pad: string, _w: string, first: string, rest: string) =>
            [`local radix = ${first}`, ...rest.split('\n').map((l) => l.trim())]
              .map((l) => `${pad}${l}`)
              .join('\n'),
        )
        .replaceAll('mfloor(', 'math.floor(')
        .replaceAll('mmax(', 'math.max(')
        .replace(
          /((?:flat\[nf \+ \d+\] = [^\n]+\n)+)nf = nf \+ \d+\nreturn/g,
          (_, puts: string) =>
            `return { ${[...puts.matchAll(/= ([^\n]+)\n/g)].map((m) => m[1]).join(', ')}, time }`,
        );
      // The one-call prelude reads TIME into time, where a call in a batch takes batch_time,
      // and its fmt is the batch's.
      const body = one
        .slice(one.indexOf('local mode = ARGV[1]'))
        .replace(
          /( *)local clock = redis\.call\('TIME'\)\n[\s\S]*?\n *time = [^\n]+/,
          '$1time = batch_time',
        );
      expect(undone).toContain(body.trimEnd());
      expect(batch.match(/redis\.call\('TIME'\)/g)).toHaveLength(1);
      expect(batch).not.toMatch(/KEYS\[\d/);
      // KEYS and ARGV per entry, after ARGV[1] (the runs of identical calls).
      // Each entry names its block of ARGV (batch.lua): a call's ARGV sent once per block.
      expect(batch).toContain(`local kb, b = c * ${kinds.length}, ARGV[2 + c]`);
      expect(batch).toContain(`ab = 1 + calls + (tonumber(b) - 1) * ${argCount(kinds)}`);
      expect(batch).toContain('pcall(one, kb, ab)');
      // `many`: the same body at n times the cost, for the kinds whose calls add up; else no.
      const adds = !kinds.includes('slidingWindowLog');
      expect(batch.includes('local function many(kb, ab, mult)')).toBe(adds);
      expect(batch.includes('local function many()\nreturn false\nend')).toBe(!adds);
      if (adds) {
        const many = batch.slice(batch.indexOf('local function many(kb, ab, mult)'));
        expect(many).toContain('local cost = (parsed[ARGV[ab + 2]] or num(ARGV[ab + 2])) * mult');
        const end = many.indexOf('\nfor c = 0, calls - 1 do\n  local kb');
        expect(end).toBeGreaterThan(0);
        // It answers true or false and puts nothing into the reply.
        expect(many.slice(0, end)).toContain('return true');
        expect(many.slice(0, end)).not.toContain('flat[');
      }
      expect(batch).not.toContain('PER_CALL');
    }
  });

  it('one-call and batch scripts alike refuse more policies than Lua has locals for', () => {
    const many = Array.from({ length: 17 }, (_, i) =>
      fixedWindow({ limit: 5, window: '1s', name: `p${i}` }),
    );
    for (const compile of [() => scriptFor(many), () => batchScriptFor(many)]) {
      let error: unknown;
      try {
        compile();
      } catch (e) {
        error = e;
      }
      expect(isFloodgateError(error) && error.code).toBe('INVALID_POLICY');
    }
    expect(batchScriptFor(many.slice(0, 16)).keysPerCall).toBe(16);
  });

  it('scriptFor: one script per kinds, cached per policies array; sha1 is the text SHA-1', () => {
    const a = [fixedWindow({ limit: 5, window: '1s' }), tokenBucket({ limit: 7, interval: '1m' })];
    const b = [fixedWindow({ limit: 9, window: '1h' }), tokenBucket({ limit: 1, interval: '1s' })];
    expect(scriptFor(a)).toBe(scriptFor(a));
    expect(scriptFor(a)).toBe(scriptFor(b));
    expect(scriptFor(a).source).toBe(assembleScript(['fixedWindow', 'tokenBucket']));
    expect(scriptFor(a).sha1).toMatch(/^[0-9a-f]{40}$/);
    expect(scriptFor([a[1]!, a[0]!]).sha1).not.toBe(scriptFor(a).sha1);
    expect(scriptFor([leakyBucket({ limit: 1, interval: '1s', queue: 1 })]).source).toContain(
      'if true then',
    );
    const all = [
      fixedWindow({ limit: 5, window: '1s' }),
      slidingWindow({ limit: 5, window: '1s' }),
      slidingWindowLog({ limit: 5, window: '1s' }),
      tokenBucket({ limit: 5, interval: '1s' }),
      leakyBucket({ limit: 5, interval: '1s', queue: 1 }),
    ];
    expect(scriptFor(all).source).toContain('KEYS[5]');
  });
});

describe('script arguments and replies', () => {
  const policies = [
    fixedWindow({ limit: 5, window: '1s' }),
    tokenBucket({ limit: 7, interval: '1m', burst: 9 }),
  ];
  const call = {
    keys: ['p:{a}:fw:5:1000', 'p:{a}:tb:7:60000:9'],
    policies,
    cost: 3,
    mode: 'limit' as const,
  };

  it('ARGV: mode, cost, now and deadline (empty = none), then the parameters each kind reads', () => {
    // fixedWindow reads limit and window; tokenBucket capacity, ticks per unit, ticks per ms and
    // its fill time at its limit in ticks.
    expect(encodeScriptArgs(call, 1_700_000_000_123)).toEqual([
      'limit',
      '3',
      '1700000000123',
      '',
      '5',
      '1000',
      '9',
      '60000',
      '7',
      '420000',
    ]);
    expect(encodeScriptArgs({ ...call, mode: 'peek' }, undefined, 42).slice(0, 4)).toEqual([
      'peek',
      '3',
      '',
      '42',
    ]);
  });

  it('the reply: five integers per policy and the time; late is STORE_TIMEOUT; else STORE_PROTOCOL', () => {
    expect(decodeScriptReply([1, 2, 1000, 0, 0, 0, 0, 5000, 300, 0, 1_700_000_000_000], 2)).toEqual(
      {
        results: [
          { allowed: true, remaining: 2, resetAfterMs: 1000, retryAfterMs: 0, delayMs: 0 },
          { allowed: false, remaining: 0, resetAfterMs: 5000, retryAfterMs: 300, delayMs: 0 },
        ],
        time: 1_700_000_000_000,
      },
    );
    try {
      decodeScriptReply(['late', 1_700_000_000_000], 1);
      expect.unreachable();
    } catch (e) {
      expect(isFloodgateError(e) && e.code).toBe('STORE_TIMEOUT');
    }
    for (const bad of [null, 'OK', [1, 2, 3, 4], [1, 2, 3, 4, 5], [1, 2, 3, 4, 5, 6, 7]]) {
      try {
        decodeScriptReply(bad, 1);
        expect.unreachable();
      } catch (e) {
        expect(isFloodgateError(e) && e.code).toBe('STORE_PROTOCOL');
      }
    }
  });
});
