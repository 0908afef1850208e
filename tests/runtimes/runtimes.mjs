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
  // No node compat flag: the bundle must run on workerd's Web APIs alone. The runtime's own
  // modules (`cloudflare:workers`) stay imports, as wrangler leaves them.
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['workerd', 'worker', 'browser'],
    target: 'es2022',
    external: ['cloudflare:*'],
    logLevel: 'error',
  });
}

/** `"a\"b"` for capnp: JSON's string escapes are capnp's. */
const text = (value) => JSON.stringify(value);

/**
 * The Durable Object namespace a sample on `@floodgate/durable-objects` needs: the class it
 * exports (made by `floodgateObject`) and the binding its `Env` names, read from the code.
 */
function durableObjectOf(code) {
  if (!code.includes('@floodgate/durable-objects')) return undefined;
  const className = /export class (\w+) extends floodgateObject\(/.exec(code)?.[1];
  const binding = /(\w+): DurableObjectNamespace\b/.exec(code)?.[1];
  if (!className || !binding) {
    throw new Error(
      'a Durable Object sample must export its floodgateObject class and type its binding',
    );
  }
  return { className, binding };
}

/**
 * workerd's config for the bundled sample: the Worker as `main`, the same code again as
 * `replica` (another isolate, bound to main's Durable Object namespace: what two isolates of one
 * Worker share on Cloudflare), the client worker, and a socket for each. `vars` become text
 * bindings; fetch may reach loopback only (where the test's Redis bridge listens). The objects
 * are SQLite-backed, kept on disk in the sample's directory: workerd's in-memory object storage
 * has no SQL API, whatever `enableSql` says.
 */
async function workerdConfig(dir, entry, ports, headers, code, vars) {
  await bundle(entry, join(dir, 'worker.js'));
  const client = join(dir, 'client-entry.js');
  writeFileSync(client, clientWorker('http://main/', headers));
  await bundle(client, join(dir, 'client.js'));
  const config = join(dir, 'config.capnp');
  const date = compatibilityDate();
  const object = durableObjectOf(code);
  const textBindings = Object.entries(vars).map(
    ([name, value]) => `(name = ${text(name)}, text = ${text(value)})`,
  );
  const bindingsOf = (service) =>
    [
      ...textBindings,
      ...(object
        ? [
            service === 'main'
              ? `(name = "${object.binding}", durableObjectNamespace = "${object.className}")`
              : `(name = "${object.binding}", durableObjectNamespace = (className = "${object.className}", serviceName = "main"))`,
          ]
        : []),
    ].join(', ');
  const storage = object
    ? `
  durableObjectNamespaces = [(className = "${object.className}", uniqueKey = "floodgate-runtimes-${object.className}", enableSql = true)],
  durableObjectStorage = (localDisk = "objects"),`
    : '';
  const objects = join(dir, 'objects');
  mkdirSync(objects, { recursive: true });
  writeFileSync(
    config,
    `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [
    (name = "main", worker = .main),
    (name = "replica", worker = .replica),
    (name = "client", worker = .client),
    (name = "internet", network = (allow = ["local"])),
    (name = "objects", disk = (path = ${text(objects)}, writable = true)),
  ],
  sockets = [
    (name = "http", address = "127.0.0.1:${ports.main}", http = (), service = "main"),
    (name = "replica", address = "127.0.0.1:${ports.replica}", http = (), service = "replica"),
    (name = "client", address = "127.0.0.1:${ports.client}", http = (), service = "client"),
  ],
);
const main :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  bindings = [${bindingsOf('main')}],${storage}
  compatibilityDate = "${date}",
);
const replica :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  bindings = [${bindingsOf('replica')}],
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

/** Polls `url` until it answers; resolves that first response (it counts against the limit). */
async function answering(runtime, proc, url, headers) {
  const deadline = Date.now() + 90_000; // generous: runtimes start slowly on a loaded machine
  for (;;) {
    if (proc.exited()) throw new Error(`${runtime} exited before serving:\n${proc.output()}`);
    try {
      return await fetch(url, { headers });
    } catch {
      if (Date.now() > deadline) {
        await proc.stop();
        throw new Error(`${runtime} did not answer on ${url} within 90 s:\n${proc.output()}`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Serves `code` on `runtime`; resolves `{ url, headers, probe, another, stop, output }` once it
 * answers. `headers` are what every request must carry: on workerd, the `cf-connecting-ip`
 * Cloudflare's edge would set. `options.vars`: the app's environment (on workerd, its text
 * bindings); `options.flags`: Deno's permission flags, as the docs give them. `another()` starts
 * a second instance of the same app on the same store: another process on Bun and Deno (the
 * same file, so the same Deno KV database), another isolate on workerd (a second Worker bound to
 * the same Durable Object namespace); its `stop()` stops only it.
 */
export async function serve(runtime, code, id, { vars = {}, flags = ['--allow-net'] } = {}) {
  const dir = join(work, id);
  mkdirSync(dir, { recursive: true });
  const entry = join(dir, 'app.ts');
  writeFileSync(entry, code);
  const port = await freePort();
  const base = { ...process.env, NO_COLOR: '1' };
  const env = { ...base, ...vars };
  let launch;
  let headers = {};
  let clientUrl;
  let replicaUrl;
  if (runtime === 'bun') {
    launch = (port) =>
      watch(
        spawn('bun', ['run', entry], { ...GROUP, cwd: here, env: { ...env, PORT: String(port) } }),
      );
  } else if (runtime === 'deno') {
    // Deno.openKv() without a path keeps its database under DENO_DIR, one per main module: a
    // DENO_DIR of the sample's own gives both its instances one database, and none outlives .work.
    const args = ['--no-lock', '--host', '127.0.0.1', ...flags];
    const denoEnv = { ...env, DENO_DIR: join(dir, 'deno-dir') };
    launch = (port) =>
      watch(
        spawn('deno', ['serve', ...args, '--port', String(port), entry], {
          ...GROUP,
          cwd: here,
          env: denoEnv,
        }),
      );
  } else if (runtime === 'workerd') {
    headers = { 'cf-connecting-ip': '203.0.113.7' };
    const ports = { main: port, replica: await freePort(), client: await freePort() };
    clientUrl = `http://127.0.0.1:${ports.client}/`;
    replicaUrl = `http://127.0.0.1:${ports.replica}/`;
    const config = await workerdConfig(dir, entry, ports, headers, code, vars);
    launch = () => watch(spawn('workerd', ['serve', config], { ...GROUP, cwd: dir, env: base }));
  } else {
    throw new Error(`unknown runtime ${runtime}`);
  }
  const proc = launch(port);
  const url = `http://127.0.0.1:${port}/`;
  const probe = await answering(runtime, proc, url, headers);
  const another = async () => {
    if (replicaUrl) {
      // In the same workerd process: stopping the server stops it.
      const probe = await answering(runtime, proc, replicaUrl, headers);
      return { url: replicaUrl, headers, probe, stop: async () => {}, output: proc.output };
    }
    const port = await freePort();
    const second = launch(port);
    const url = `http://127.0.0.1:${port}/`;
    const probe = await answering(runtime, second, url, headers);
    return { url, headers, probe, ...second };
  };
  return { runtime, dir, url, headers, clientUrl, probe, another, ...proc };
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
