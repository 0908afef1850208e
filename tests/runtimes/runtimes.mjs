// Starts a sample as each runtime would serve it: `bun run`, `deno serve`, and workerd with a
// bundle and a config (what wrangler does for you). The binaries come from this package's
// devDependencies (npm), found through node_modules/.bin, which pnpm puts on PATH for scripts.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { build } from 'esbuild';
import { clientScript, clientWorker } from './client.mjs';

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

async function bundle(entry, outfile) {
  // No node compat flag: the bundle must run on workerd's Web APIs alone.
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    logLevel: 'error',
  });
}

async function workerdConfig(dir, entry, port, clientPort, headers) {
  await bundle(entry, join(dir, 'worker.js'));
  const client = join(dir, 'client-entry.js');
  writeFileSync(client, clientWorker('http://main/', headers));
  await bundle(client, join(dir, 'client.js'));
  const config = join(dir, 'config.capnp');
  const date = compatibilityDate();
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .worker), (name = "client", worker = .client)],
  sockets = [
    (name = "http", address = "127.0.0.1:${port}", http = (), service = "main"),
    (name = "client", address = "127.0.0.1:${clientPort}", http = (), service = "client"),
  ],
);
const worker :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "${date}",
);
const client :Workerd.Worker = (
  modules = [(name = "client.js", esModule = embed "client.js")],
  bindings = [(name = "MAIN", service = "main")],
  compatibilityDate = "${date}",
);
`,
  );
  return config;
}

// The npm packages start each binary through a shim (a shell script, or node running it as a
// grandchild): each program gets its own process group, and stopping it signals the group.
const GROUP = { detached: true };

/** Watches a child spawned with GROUP; `stop()` signals its whole group. */
function watch(child) {
  let output = '';
  child.stdout.on('data', (d) => {
    output += d;
  });
  child.stderr.on('data', (d) => {
    output += d;
  });
  let exited = false;
  const exit = new Promise((resolve) => child.on('exit', resolve));
  exit.then(() => {
    exited = true;
  });
  const signal = (name) => {
    try {
      process.kill(-child.pid, name);
    } catch {
      // the group is gone already
    }
  };
  // Should this script die first, what it started goes with it.
  const onExit = () => signal('SIGKILL');
  process.on('exit', onExit);
  const stop = async () => {
    process.off('exit', onExit);
    if (!exited) {
      signal('SIGTERM');
      setTimeout(() => signal('SIGKILL'), 5000).unref();
      await exit;
    }
    signal('SIGKILL'); // whatever the shim left behind
  };
  return { exit, stop, exited: () => exited, output: () => output };
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
  let proc;
  let headers = {};
  let clientUrl;
  if (runtime === 'bun') {
    proc = watch(
      spawn('bun', ['run', entry], { ...GROUP, cwd: here, env: { ...env, PORT: String(port) } }),
    );
  } else if (runtime === 'deno') {
    const args = ['--no-lock', '--allow-net', '--host', '127.0.0.1', '--port', String(port)];
    proc = watch(spawn('deno', ['serve', ...args, entry], { ...GROUP, cwd: here, env }));
  } else if (runtime === 'workerd') {
    headers = { 'cf-connecting-ip': '203.0.113.7' };
    const clientPort = await freePort();
    clientUrl = `http://127.0.0.1:${clientPort}/`;
    const config = await workerdConfig(dir, entry, port, clientPort, headers);
    proc = watch(spawn('workerd', ['serve', config], { ...GROUP, cwd: dir, env }));
  } else {
    throw new Error(`unknown runtime ${runtime}`);
  }
  const url = `http://127.0.0.1:${port}/`;
  const deadline = Date.now() + 90_000; // generous: runtimes start slowly on a loaded machine
  for (;;) {
    if (proc.exited()) throw new Error(`${runtime} exited before serving:\n${proc.output()}`);
    try {
      // The probe is a request like any other: it counts against the limit.
      const res = await fetch(url, { headers });
      return { runtime, dir, url, headers, clientUrl, probe: res, ...proc };
    } catch {
      if (Date.now() > deadline) {
        await proc.stop();
        throw new Error(`${runtime} did not answer on ${url} within 90 s:\n${proc.output()}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/** Runs @floodgate/client inside the server's runtime against it; resolves its report. */
export async function runClient(server) {
  if (server.runtime === 'workerd') {
    const res = await fetch(server.clientUrl);
    if (res.status !== 200) throw new Error(`client worker: ${res.status} ${await res.text()}`);
    return res.json();
  }
  const file = join(server.dir, 'client.ts');
  writeFileSync(file, clientScript(server.url, server.headers));
  const proc =
    server.runtime === 'bun'
      ? watch(spawn('bun', ['run', file], { ...GROUP, cwd: here }))
      : watch(
          spawn('deno', ['run', '--no-lock', '--allow-net=127.0.0.1', file], {
            ...GROUP,
            cwd: here,
          }),
        );
  const timer = setTimeout(() => proc.stop(), 90_000);
  const code = await proc.exit;
  clearTimeout(timer);
  await proc.stop();
  const last = proc.output().trim().split('\n').at(-1);
  if (code !== 0) throw new Error(`client on ${server.runtime} exited ${code}:\n${proc.output()}`);
  return JSON.parse(last);
}
