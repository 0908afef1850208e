// The README's test command is the whole set-up on a fresh machine, and CI runs exactly it: a
// command that needs a package nobody installs fails on a new contributor's first day, not in CI
// (a CI machine may still hold what an earlier run installed by hand).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
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

// Every system program a test starts must be one the set-up script installs and checks.
const script = readFileSync(join(root, 'scripts', 'setup-system.sh'), 'utf8');
const started = new Set();
function scan(dir) {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) scan(path);
    else if (/\.(ts|mjs|js)$/.test(name)) {
      const src = readFileSync(path, 'utf8');
      if (/executablePath/.test(src)) started.add('chromium');
      if (/['"`]redis-server['"`]/.test(src)) started.add('redis-server');
    }
  }
}
for (const d of ['packages', 'tests']) scan(join(root, d));
for (const program of started) {
  if (!script.includes(`missing="$missing ${program}"`)) {
    failures.push(
      `a test starts ${program}, which scripts/setup-system.sh neither checks nor installs`,
    );
  }
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
console.log(
  `check-setup ok: README's test command is .ci/run's; it installs ${[...started].join(', ')}`,
);
