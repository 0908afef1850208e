import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { isFloodgateError } from '../src/errors.js';
import { LIMIT_SCRIPT, LUA_SOURCES } from '../src/lua.generated.js';
import { fixedWindow, tokenBucket } from '../src/policies/factories.js';
import { decodeScriptReply, encodeScriptArgs, LIMIT_SCRIPT_SHA1 } from '../src/script.js';

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
      for (const sub of ['scripts', 'lua', 'src'])
        cpSync(join(core, sub), join(dir, sub), { recursive: true });
      const generated = join(dir, 'src', 'lua.generated.ts');
      const check = () =>
        spawnSync(process.execPath, ['scripts/gen-lua.mjs', '--check'], {
          cwd: dir,
          encoding: 'utf8',
        });
      expect(check().status).toBe(0);
      writeFileSync(
        join(dir, 'lua', 'common.lua'),
        `${readFileSync(join(dir, 'lua', 'common.lua'), 'utf8')}\n-- edited\n`,
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

  it('LIMIT_SCRIPT is every source, helpers first and the composition last', () => {
    const order = [
      'common',
      'fixed_window',
      'sliding_window',
      'sliding_window_log',
      'token_bucket',
      'leaky_bucket',
      'limit',
    ];
    expect(Object.keys(LUA_SOURCES).sort()).toEqual([...order].sort());
    expect(LIMIT_SCRIPT).toBe(order.map((n) => LUA_SOURCES[n]).join('\n'));
    expect(LIMIT_SCRIPT_SHA1).toMatch(/^[0-9a-f]{40}$/);
    for (const kind of [
      'fixedWindow',
      'slidingWindow',
      'slidingWindowLog',
      'tokenBucket',
      'leakyBucket',
    ]) {
      expect(LIMIT_SCRIPT).toContain(`POLICIES.${kind} = function`);
    }
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

  it('ARGV: mode, cost, now (empty = Redis TIME), deadline, then kind and three integers per policy', () => {
    expect(encodeScriptArgs(call, 1_700_000_000_123)).toEqual([
      'limit',
      '3',
      '1700000000123',
      '',
      'fixedWindow',
      '5',
      '1000',
      '0',
      'tokenBucket',
      '9',
      '60000',
      '7',
    ]);
    expect(encodeScriptArgs({ ...call, mode: 'peek' })[2]).toBe('');
    expect(encodeScriptArgs(call, undefined, 1_700_000_000_500)[3]).toBe('1700000000500');
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
