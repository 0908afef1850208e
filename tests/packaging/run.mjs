// The packaging test: what npm users install, tried the way they would. Every published package is
// packed with pnpm (workspace:^ ranges rewritten), dry-run published, checked by publint and
// @arethetypeswrong (node10, node16 CJS, node16 ESM, bundler), installed together with npm into a
// scratch project with no workspace links, and smoke-tested from ESM, CJS and TypeScript.
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { promisify } from 'node:util';
import { brokenTarballIsCaught } from './canary.mjs';
import { exportPaths, exportTargets, publishedPackages, root, specifier } from './workspace.mjs';

const run = promisify(execFile);
const here = new URL('.', import.meta.url).pathname;
const bin = (name) => join(here, 'node_modules', '.bin', name);
const failures = [];
let tmp;
const fail = (msg) => failures.push(msg);

async function sh(cmd, args, cwd, label) {
  try {
    return await run(cmd, args, {
      cwd,
      maxBuffer: 64 << 20,
      env: { ...process.env, FORCE_COLOR: '0' },
    });
  } catch (e) {
    fail(`${label}: \`${cmd} ${args.join(' ')}\` failed\n${e.stdout ?? ''}${e.stderr ?? ''}`);
    return null;
  }
}

/** Runs the thunks with at most `n` in flight (this machine has two cores and other users). */
async function limited(n, thunks) {
  const out = [];
  let next = 0;
  const worker = async () => {
    while (next < thunks.length) {
      const i = next++;
      out[i] = await thunks[i]();
    }
  };
  await Promise.all(Array.from({ length: n }, worker));
  return out;
}

const packages = publishedPackages();
const self = createRequire(import.meta.url)('./package.json');

// Structure first: unbuilt or unordered packages give one clear message instead of a pack error.
for (const { dir, pkg } of packages) {
  const rel = relative(root, dir);
  if (!self.devDependencies?.[pkg.name]) {
    fail(
      `${pkg.name} is published but not a devDependency of tests/packaging: add "${pkg.name}": "workspace:*" so turbo builds it before this test`,
    );
  }
  for (const path of exportPaths(pkg)) {
    for (const target of exportTargets(pkg.exports?.[path] ?? pkg.main)) {
      if (!existsSync(join(dir, target)))
        fail(`${rel}: exports["${path}"] -> ${target} does not exist; run \`pnpm build\` first`);
    }
    if (path !== '.' && !pkg.typesVersions?.['*']?.[path.slice(2)]) {
      fail(
        `${rel}/package.json: subpath "${path}" has no typesVersions entry, so node10 resolution cannot find its types (see CONTRIBUTING.md, "Subpath exports")`,
      );
    }
  }
  for (const field of ['license', 'repository', 'keywords', 'engines', 'files']) {
    if (pkg[field] === undefined) fail(`${rel}/package.json: missing "${field}"`);
  }
  if (pkg.sideEffects !== false) fail(`${rel}/package.json: "sideEffects" must be false`);
}
if (failures.length) finish();

// First, that the checks below reject a broken tarball at all.
const canary = await brokenTarballIsCaught(bin);
if (canary !== undefined) fail(canary);
else console.log('a broken tarball (its CJS entry left out) is rejected by publint and attw');

tmp = mkdtempSync(join(tmpdir(), 'floodgate-pack-'));
const packs = join(tmp, 'tarballs');
const started = Date.now();

// Pack, then check each tarball: a dry-run publish, publint, attw with every resolution mode.
const tarballs = await limited(
  2,
  packages.map(({ dir, pkg }) => async () => {
    const out = await sh('pnpm', ['pack', '--pack-destination', packs], dir, `${pkg.name} pack`);
    if (!out) return null;
    const file = readdirSync(packs).find((f) =>
      f.startsWith(`${pkg.name.slice(1).replace('/', '-')}-${pkg.version}.tgz`),
    );
    if (!file) {
      fail(`${pkg.name}: pnpm pack wrote no tarball`);
      return null;
    }
    const tgz = join(packs, file);
    await sh(
      'npm',
      ['publish', '--dry-run', '--access', 'public', '--tag', 'packaging-test', tgz],
      tmp,
      `${pkg.name} publish dry run`,
    );
    await sh(bin('publint'), ['run', '--strict', dir], dir, `${pkg.name} publint`);
    await sh(bin('attw'), [tgz, '--format', 'table-flipped'], dir, `${pkg.name} attw`);
    return { pkg, tgz };
  }),
);
console.log(
  `packed, dry-run published, publint and attw: ${packages.length} packages in ${Date.now() - started} ms`,
);
if (failures.length) finish();

// One consumer project with every tarball: dependencies between them resolve to the tarballs,
// peers (ioredis, redis, vitest) come from the registry as they would for a user, at the version
// the workspace tests them with (its exact devDependency), so a peer's new release cannot turn
// this run red on its own: ioredis 6.1.0's .d.ts files import the untyped `redis-errors` (TS7016
// under skipLibCheck: false), a problem of that release noted in packages/ioredis/README.md.
const app = join(tmp, 'app');
const deps = Object.fromEntries(tarballs.map(({ pkg, tgz }) => [pkg.name, `file:${tgz}`]));
// Optional peers too (express, fastify, hono, redis…): their types are named in the .d.ts files,
// and a user of that entry point has them. A peer without its own types brings the @types
// package the Floodgate package was built against.
for (const { pkg } of tarballs) {
  for (const [peer, range] of Object.entries(pkg.peerDependencies ?? {})) {
    if (peer.startsWith('@floodgate/')) continue;
    const tested = pkg.devDependencies?.[peer];
    deps[peer] ??= tested !== undefined && /^\d+\.\d+\.\d+$/.test(tested) ? tested : range;
    const types = `@types/${peer.replace(/^@(.*)\//, '$1__')}`;
    if (pkg.devDependencies?.[types]) deps[types] ??= pkg.devDependencies[types];
  }
}
write(
  'package.json',
  JSON.stringify(
    {
      name: 'consumer',
      private: true,
      type: 'module',
      dependencies: { ...deps, '@types/node': '^20.19.0' },
    },
    null,
    2,
  ),
);
await sh(
  'npm',
  ['install', '--no-audit', '--no-fund', '--ignore-scripts', '--loglevel=error'],
  app,
  'npm install of the tarballs',
);
console.log(`npm install: ${Date.now() - started} ms`);
if (failures.length) finish();

const specs = packages.flatMap(({ pkg }) => exportPaths(pkg).map((p) => specifier(pkg, p)));
const has = (name) => packages.some(({ pkg }) => pkg.name === name);
// The decision that proves the packages work together, not merely load.
const decideEsm = has('@floodgate/memory')
  ? `const { createLimiter, tokenBucket } = await import('@floodgate/core');
const { MemoryStore } = await import('@floodgate/memory');
const limiter = createLimiter({ store: new MemoryStore(), policy: tokenBucket({ limit: 2, interval: '1m' }) });
const seen = [];
for (let i = 0; i < 3; i++) seen.push((await limiter.limit('k')).allowed);
if (seen.join() !== 'true,true,false') throw new Error('unexpected decisions ' + seen.join());`
  : '';
write(
  'smoke.mjs',
  `for (const spec of ${JSON.stringify(specs)}) {
  const ns = await import(spec);
  if (Object.keys(ns).length === 0) throw new Error(spec + ' exports nothing from ESM');
}
${decideEsm}
console.log('esm ok');
`,
);
// Each CommonJS entry of core is its own file: without shared chunks each would carry its own
// FloodgateError, and \`instanceof\` would fail on an error thrown from /store's Breaker.
const CJS_ONE_ERROR_CLASS = `try {
  new (require('@floodgate/core/store').Breaker)({ failures: -1 });
  throw new Error('Breaker took failures: -1');
} catch (e) {
  if (!(e instanceof require('@floodgate/core').FloodgateError)) throw new Error('two FloodgateError classes in CJS: ' + e);
}`;
write(
  'smoke.cjs',
  `for (const spec of ${JSON.stringify(specs.filter((s) => !s.startsWith('@floodgate/testkit')))}) {
  const ns = require(spec);
  if (Object.keys(ns).length === 0) throw new Error(spec + ' exports nothing from CJS');
}
${has('@floodgate/memory') ? "if (typeof require('@floodgate/memory').MemoryStore !== 'function') throw new Error('no MemoryStore');" : ''}
${has('@floodgate/core') ? "if (typeof require('@floodgate/core').createLimiter !== 'function') throw new Error('no createLimiter');" : ''}
${has('@floodgate/core') ? CJS_ONE_ERROR_CLASS : ''}
console.log('cjs ok');
`,
);
const tsImports = specs.map((s, i) => `import * as ns${i} from '${s}';`).join('\n');
const tsUse = `export const all = [${specs.map((_, i) => `ns${i}`).join(', ')}];`;
const tsDecide = has('@floodgate/memory')
  ? `import { createLimiter, type Decision, tokenBucket } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
const limiter = createLimiter({ store: new MemoryStore(), policy: tokenBucket({ limit: 2, interval: '1m' }) });
export const decide = (key: string): Promise<Decision> => limiter.limit(key);`
  : '';
write('consumer.ts', `${tsImports}\n${tsDecide}\n${tsUse}\n`);
write('consumer-cjs.cts', `${tsImports}\n${tsUse}\n`);
const tsconfig = (module, moduleResolution, include) =>
  JSON.stringify({
    compilerOptions: {
      module,
      moduleResolution,
      target: 'es2022',
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: ['node'],
    },
    include,
  });
write('tsconfig.node16.json', tsconfig('node16', 'node16', ['consumer.ts', 'consumer-cjs.cts']));
write('tsconfig.bundler.json', tsconfig('esnext', 'bundler', ['consumer.ts']));

await limited(2, [
  () => sh('node', ['smoke.mjs'], app, 'ESM smoke test'),
  () => sh('node', ['smoke.cjs'], app, 'CJS smoke test'),
  () => sh(bin('tsc'), ['-p', 'tsconfig.node16.json'], app, 'tsc --noEmit (node16)'),
  () => sh(bin('tsc'), ['-p', 'tsconfig.bundler.json'], app, 'tsc --noEmit (bundler)'),
]);
console.log(
  `smoke tests from ESM, CJS, TypeScript node16 and bundler: ${specs.length} entry points, ${Date.now() - started} ms`,
);
finish();

function write(name, text) {
  mkdirSync(app, { recursive: true });
  writeFileSync(join(app, name), text);
}

function finish() {
  if (tmp && !process.env.KEEP_PACKAGING_TMP) rmSync(tmp, { recursive: true, force: true });
  if (failures.length) {
    console.error(`packaging test: ${failures.length} failure(s)\n\n${failures.join('\n\n')}`);
    process.exit(1);
  }
  console.log(`packaging test ok: ${packages.map(({ pkg }) => pkg.name).join(', ')}`);
  process.exit(0);
}
