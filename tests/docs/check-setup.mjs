// The README's test command is the whole set-up on a fresh machine, and CI runs exactly it: a
// command that needs a package nobody installs fails on a new contributor's first day, not in CI
// (a CI machine may still hold what an earlier run installed by hand).
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative } from 'node:path';
import { root } from '../packaging/workspace.mjs';

const failures = [];
const SETUP = 'sh scripts/setup-system.sh';

/** The one-line commands of the README's ```sh blocks. */
function readmeCommands() {
  const md = readFileSync(join(root, 'README.md'), 'utf8');
  return [...md.matchAll(/```sh\n([\s\S]*?)```/g)].flatMap((m) =>
    m[1].split('\n').filter((l) => l.trim() && !l.startsWith('#')),
  );
}

/** The command lines .ci/run executes (not its comments, set or cd lines). */
function ciCommands() {
  return readFileSync(join(root, '.ci', 'run'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !/^\s*(#|set |export |cd )/.test(l));
}

const commands = readmeCommands();
const test = commands.filter((c) => /\bpnpm test$/.test(c));
if (test.length !== 1) failures.push(`README.md: expected one test command, found ${test.length}`);
for (const c of commands.filter((c) => /pnpm (test|demo)$/.test(c))) {
  if (!c.startsWith(`${SETUP} && `)) {
    failures.push(`README.md: "${c}" does not start with "${SETUP} && " (system packages first)`);
  }
}
const ci = ciCommands();
if (ci.length !== 1 || ci[0] !== test[0]) {
  failures.push(`.ci/run runs ${JSON.stringify(ci)}, not the README's test command "${test[0]}"`);
}

// Every system program a test starts must be one the set-up script installs and checks, or one
// an npm package the test's own package depends on provides (pnpm install puts it in
// node_modules/.bin, and it must run from there: a binary whose install script pnpm skipped
// does not).
const script = readFileSync(join(root, 'scripts', 'setup-system.sh'), 'utf8');
/** program → the files that start it */
const started = new Map();
// What the test command itself runs before any test: always there.
const GIVEN = new Set(['sh', 'node', 'npm', 'pnpm']);
const SPAWN = /\b(?:spawn|spawnSync|execFile|execFileSync)\(\s*['"`]([\w.-]+)['"`]/g;
function note(program, file) {
  if (!started.has(program)) started.set(program, []);
  started.get(program).push(file);
}
function scan(dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) scan(path);
    else if (/\.(ts|mjs|js)$/.test(name)) {
      const src = readFileSync(path, 'utf8');
      if (/executablePath/.test(src)) note('chromium', path);
      if (/['"`]redis-server['"`]/.test(src)) note('redis-server', path);
      for (const [, program] of src.matchAll(SPAWN)) if (!GIVEN.has(program)) note(program, path);
    }
  }
}
for (const d of ['packages', 'tests']) scan(join(root, d));

/** The package directory a file belongs to. */
function packageDir(file) {
  let dir = dirname(file);
  while (!existsSync(join(dir, 'package.json'))) dir = dirname(dir);
  return dir;
}

/** Why an npm dependency of the file's package does not provide `program`, or undefined. */
function npmProblem(program, file) {
  const dir = packageDir(file);
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const deps = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies });
  const require = createRequire(join(dir, 'package.json'));
  const provider = deps.find((dep) => {
    try {
      const { bin } = require(`${dep}/package.json`);
      return typeof bin === 'string' ? dep === program : Object.hasOwn(bin ?? {}, program);
    } catch {
      return false; // no package.json export: not a binary package of ours
    }
  });
  const where = relative(root, dir);
  if (!provider) return `no dependency of ${where} provides it`;
  const bin = join(dir, 'node_modules', '.bin', program);
  if (!existsSync(bin)) return `${provider} is a dependency of ${where}, but ${bin} is missing`;
  try {
    execFileSync(bin, ['--version'], { stdio: 'pipe', timeout: 60_000 });
  } catch (e) {
    const why = String(e.stderr || e.message)
      .trim()
      .split('\n')[0];
    return `${relative(root, bin)} --version fails (install script not allowed in pnpm.onlyBuiltDependencies?): ${why}`;
  }
  return undefined;
}

const fromNpm = [];
for (const [program, files] of started) {
  if (script.includes(`missing="$missing ${program}"`)) continue;
  const problems = files.map((f) => npmProblem(program, f)).filter(Boolean);
  if (problems.length === 0) {
    fromNpm.push(program);
    continue;
  }
  failures.push(
    `a test starts ${program} (${relative(root, files[0])}), which scripts/setup-system.sh neither checks nor installs, and ${problems[0]}`,
  );
}
try {
  execFileSync('sh', [join(root, 'scripts', 'setup-system.sh'), '--check'], { stdio: 'pipe' });
} catch (e) {
  failures.push(`scripts/setup-system.sh --check: ${String(e.stderr ?? e).trim()}`);
}

if (failures.length) {
  for (const f of failures) console.error(`check-setup: ${f}`);
  process.exit(1);
}
const system = [...started.keys()].filter((p) => !fromNpm.includes(p));
console.log(
  `check-setup ok: README's test command is .ci/run's; it installs ${system.join(', ')}; from npm: ${fromNpm.join(', ')}`,
);
