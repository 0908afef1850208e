import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, test } from 'vitest';

// The built package, as users get it (turbo builds it before this package's tests).
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const ADAPTERS = ['express', 'fastify', 'hono', 'node', 'fetch'] as const;
const FRAMEWORKS =
  /[\\/]node_modules[\\/](express|fastify|hono|@hono[\\/][^\\/]+|@fastify[\\/][^\\/]+)[\\/]/;
// Everything a built entry may import besides its own chunks (lru-cache: core's own, kept by
// `policy` functions' limiter cache).
const ALLOWED =
  /^(node:.*|@floodgate\/core|@floodgate\/core\/(headers|internal)|ipaddr\.js|lru-cache|proxy-addr)$/;

/** Bare specifiers reachable from one built ESM file, following relative imports. */
function bareImports(file: string, seen = new Set<string>()): Set<string> {
  const out = new Set<string>();
  if (seen.has(file)) return out;
  seen.add(file);
  const source = readFileSync(file, 'utf8');
  for (const m of source.matchAll(
    /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|(?:^|\n)\s*import\s*['"]([^'"]+)['"]/g,
  )) {
    const spec = m[1] ?? m[2] ?? m[3]!;
    if (spec.startsWith('.'))
      for (const s of bareImports(resolve(dirname(file), spec), seen)) out.add(s);
    else out.add(spec);
  }
  return out;
}

describe('importing one adapter loads no framework', () => {
  test('the package is built', () => {
    expect(existsSync(join(dist, 'index.js')), 'run `pnpm build` first').toBe(true);
  });

  for (const adapter of ADAPTERS) {
    test(`${adapter}: the ESM build imports only core, ipaddr.js, lru-cache, proxy-addr and node: modules`, () => {
      const imports = [...bareImports(join(dist, adapter, 'index.js'))];
      expect(imports.filter((s) => !ALLOWED.test(s))).toEqual([]);
      expect(imports).toContain('@floodgate/core');
    });

    test(`${adapter}: require() in a fresh process loads no framework module`, () => {
      const script = `require('@floodgate/http/${adapter}');
        process.stdout.write(JSON.stringify(Object.keys(require.cache)));`;
      const loaded = JSON.parse(
        execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' }),
      ) as string[];
      expect(loaded.some((f) => f.includes(`${join('dist', adapter, 'index.cjs')}`))).toBe(true);
      expect(loaded.filter((f) => FRAMEWORKS.test(f))).toEqual([]);
    });
  }

  test('the CJS build runs ipKey through proxy-addr and ipaddr.js', () => {
    const script = `const { ipKey } = require('@floodgate/http');
      const view = { address: '127.0.0.1', header: (n) => (n === 'x-forwarded-for' ? '2001:db8::5' : undefined) };
      process.stdout.write(ipKey({ trustProxy: 'loopback' })(view));`;
    const out = execFileSync(process.execPath, ['-e', script], { cwd: root, encoding: 'utf8' });
    expect(out).toBe('ip:2001:db8::/56');
  });

  test('the ESM entry of every adapter imports in a fresh process', () => {
    const script = `Promise.all(${JSON.stringify(ADAPTERS)}.map((a) => import('@floodgate/http/' + a)))
      .then((mods) => process.stdout.write(mods.map((m) => typeof m.rateLimit).join(',')));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], {
      cwd: root,
      encoding: 'utf8',
    });
    expect(out).toBe('function,function,function,function,function');
  });
});
