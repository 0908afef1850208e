// Starts a sample as each runtime would serve it: `bun run`, `deno serve`, and workerd with a
// bundle and a config (what wrangler does for you). The binaries come from this package's
// devDependencies (npm), found through node_modules/.bin, which pnpm puts on PATH for scripts.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';

const here = new URL('.', import.meta.url).pathname;
const work = join(here, '.work');
const require = createRequire(import.meta.url);

/** The installed version of a runtime package. */
export function runtimeVersion(runtime) {
  return JSON.parse(readFileSync(require.resolve(`${runtime}/package.json`), 'utf8')).version;
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

// workerd's config names the compatibility date; the newest its release knows is in its version.
function compatibilityDate() {
  const day = runtimeVersion('workerd').split('.')[1];
  return `${day.slice(0, 4)}-${day.slice(4, 6)}-${day.slice(6, 8)}`;
}

async function workerdConfig(dir, entry, port) {
  // No node compat flag: the bundle must run on workerd's Web APIs alone.
  await build({
    entryPoints: [entry],
    outfile: join(dir, 'worker.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'error',
  });
  const config = join(dir, 'config.capnp');
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${compatibilityDate()}",
);
`,
  );
  return config;
}

/**
 * Serves `code` on `runtime`; resolves `{ url, headers, stop, output }` once it answers.
 * `headers` are what every request must carry: on workerd, the `cf-connecting-ip` Cloudflare's
 * edge would set.
 */
export async function serve(runtime, code, id) {
  const dir = join(work, id);
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, 'app.ts');
  writeFileSync(entry, code);
  const port = await freePort();
  const env = { ...process.env, NO_COLOR: '1' };
  let child;
  let headers = {};
  // The npm packages start each binary through a shim (a shell script, or node running it as a
  // grandchild): each server gets its own process group, and stopping it signals the group.
  const opts = { cwd: here, detached: true };
  if (runtime === 'bun') {
    child = spawn('bun', ['run', entry], { ...opts, env: { ...env, PORT: String(port) } });
  } else if (runtime === 'deno') {
    child = spawn(
      'deno',
      ['serve', '--no-lock', '--allow-net', '--host', '127.0.0.1', '--port', String(port), entry],
      { ...opts, env },
    );
  } else if (runtime === 'workerd') {
    const config = await workerdConfig(dir, entry, port);
    child = spawn('workerd', ['serve', config], { ...opts, env, cwd: dir });
    headers = { 'cf-connecting-ip': '203.0.113.7' };
  } else {
    throw new Error(`unknown runtime ${runtime}`);
  }
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  let exited = false;
  const group = child.pid;
  const signal = (name) => {
    try {
      process.kill(-group, name);
    } catch {
      // the group is gone already
    }
  };
  // Should this script die first, its servers go with it.
  const onExit = () => signal('SIGKILL');
  process.on('exit', onExit);
  child.on('exit', () => {
    exited = true;
  });
  const stop = () =>
    new Promise((resolve) => {
      process.off('exit', onExit);
      const done = () => {
        signal('SIGKILL'); // whatever the shim left behind
        resolve();
      };
      if (exited) return done();
      child.on('exit', done);
      signal('SIGTERM');
      setTimeout(() => signal('SIGKILL'), 5000).unref();
    });
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 90_000; // generous: runtimes start slowly on a loaded machine
  for (;;) {
    if (exited) throw new Error(`${runtime} exited before serving:\n${output}`);
    try {
      // The probe is a request like any other: it counts against the limit.
      const res = await fetch(url, { headers });
      return { url, headers, stop, output: () => output, probe: res };
    } catch {
      if (Date.now() > deadline) {
        await stop();
        throw new Error(`${runtime} did not answer on ${url} within 90 s:\n${output}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
