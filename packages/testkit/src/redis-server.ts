import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { redisCommands } from './resp.js';

/**
 * How `startRedisServer` runs `redis-server`: which executable, extra configuration, how long
 * to wait for it.
 * @example
 * ```ts
 * import { type RedisServerOptions, startRedisServer } from '@floodgate/testkit/redis';
 *
 * // A small server that evicts under memory pressure, for an eviction test.
 * const options: RedisServerOptions = { args: ['--maxmemory', '10mb', '--maxmemory-policy', 'allkeys-lru'] };
 * const server = await startRedisServer(options);
 * ```
 * @public
 */
export interface RedisServerOptions {
  /** The `redis-server` executable. @default 'redis-server' (looked up on PATH) */
  bin?: string;
  /** Extra command-line configuration, e.g. `['--maxmemory', '10mb']`. @default [] */
  args?: readonly string[];
  /** How long to wait for the server to answer PING. @default 10_000 */
  startTimeoutMs?: number;
}

/**
 * A throw-away `redis-server` on a free loopback port, owned by this process.
 * @example
 * ```ts
 * import { type RedisServer, redisCommand, startRedisServer } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, expect, it } from 'vitest';
 *
 * let server: RedisServer;
 * beforeAll(async () => { server = await startRedisServer(); });
 * afterAll(() => server.stop());
 * it('forgets every key on restart', async () => {
 *   await redisCommand(server.port, ['SET', 'k', 'v']);
 *   await server.restart(); // same port, a new process
 *   expect(await redisCommand(server.port, ['EXISTS', 'k'])).toBe(0);
 * });
 * ```
 * @public
 */
export interface RedisServer {
  readonly host: string;
  readonly port: number;
  /** `redis://<host>:<port>` */
  readonly url: string;
  /** The current process id (changes on `restart()`). */
  readonly pid: number;
  /** Stops the server (SIGTERM, then SIGKILL after 5 s) and removes its temp directory. */
  stop(): Promise<void>;
  /** Stops the server and starts a new one on the same port: every key and cached script is lost. */
  restart(): Promise<void>;
}

const HOST = '127.0.0.1';
const INSTALL_HINT =
  'redis-server was not found on PATH. The Redis store tests run against real redis-server ' +
  'processes: install it with `apt-get install redis-server` (Debian/Ubuntu) or ' +
  '`brew install redis` (macOS), or pass `bin` to startRedisServer.';

// Every server this process started and has not stopped: killed when the process exits, so an
// aborted test run leaves no redis-server behind.
const live = new Set<ChildProcess>();
let exitHookInstalled = false;
function track(child: ChildProcess): void {
  if (!exitHookInstalled) {
    exitHookInstalled = true;
    process.on('exit', () => {
      for (const c of live) c.kill('SIGKILL');
    });
  }
  live.add(child);
  child.once('exit', () => live.delete(child));
}

/**
 * A port the OS says is free right now (never 6379, the conventional one).
 * @example
 * ```ts
 * import { freePort } from '@floodgate/testkit/redis';
 * import { Redis } from 'ioredis';
 *
 * // A port nothing listens on: every connection is refused.
 * const redis = new Redis(await freePort(), '127.0.0.1', { lazyConnect: true, retryStrategy: () => null });
 * ```
 * @public
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = await new Promise<number>((resolve, reject) => {
      const server = createServer();
      server.unref();
      server.once('error', reject);
      server.listen(0, HOST, () => {
        const address = server.address();
        const p = typeof address === 'object' && address !== null ? address.port : 0;
        server.close(() => resolve(p));
      });
    });
    if (port !== 6379 && port !== 0) return port;
  }
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

interface Running {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

function spawnServer(bin: string, port: number, dir: string, extra: readonly string[]): Running {
  const child = spawn(
    bin,
    [
      '--port',
      String(port),
      '--bind',
      HOST,
      '--save',
      '',
      '--appendonly',
      'no',
      '--dir',
      dir,
      '--daemonize',
      'no',
      '--logfile',
      '',
      ...extra,
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], cwd: dir },
  );
  let log = '';
  const keep = (chunk: Buffer): void => {
    log = (log + chunk.toString('utf8')).slice(-8192);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => {
    child.once('exit', (code) => resolve(code));
    child.once('error', () => resolve(-1));
  });
  return { child, output: () => log, exited };
}

// Resolves when the server started as `child` answers on `port`: its INFO names its own pid, so a
// stranger that happened to take the port is never mistaken for it.
async function waitReady(
  run: Running,
  port: number,
  timeoutMs: number,
): Promise<'ready' | 'exited' | 'timeout'> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void run.exited.then(() => {
    exited = true;
  });
  while (Date.now() < deadline) {
    if (exited) return 'exited';
    try {
      const [pong, info] = await redisCommands(port, [['PING'], ['INFO', 'server']], {
        timeoutMs: 1000,
      });
      if (
        pong === 'PONG' &&
        typeof info === 'string' &&
        info.includes(`process_id:${run.child.pid}\r`)
      ) {
        return 'ready';
      }
    } catch {
      // not listening yet
    }
    await sleep(25);
  }
  return exited ? 'exited' : 'timeout';
}

async function kill(run: Running): Promise<void> {
  if (run.child.exitCode !== null || run.child.signalCode !== null) return;
  run.child.kill('SIGTERM');
  const timer = setTimeout(() => run.child.kill('SIGKILL'), 5000);
  await run.exited;
  clearTimeout(timer);
}

async function startOn(
  bin: string,
  port: number,
  dir: string,
  extra: readonly string[],
  timeoutMs: number,
): Promise<Running | { failed: string; spawnError?: NodeJS.ErrnoException }> {
  const run = spawnServer(bin, port, dir, extra);
  let spawnError: NodeJS.ErrnoException | undefined;
  run.child.once('error', (e) => {
    spawnError = e;
  });
  if (run.child.pid === undefined) {
    await run.exited;
    return { failed: run.output(), ...(spawnError ? { spawnError } : {}) };
  }
  track(run.child);
  const state = await waitReady(run, port, timeoutMs);
  if (state === 'ready') return run;
  await kill(run);
  return {
    failed: run.output() || `redis-server did not answer on port ${port} within ${timeoutMs} ms`,
  };
}

/**
 * Starts a throw-away `redis-server` on a free loopback port: no persistence (`--save ''`,
 * `--appendonly no`), its own temp directory, ready once it answers PING. Throws with install
 * instructions when `redis-server` is not on PATH. Servers still running when the process exits
 * are killed.
 * @example
 * ```ts
 * import { startRedisServer } from '@floodgate/testkit/redis';
 * import { Redis } from 'ioredis';
 *
 * const server = await startRedisServer(); // never the Redis on 6379
 * const redis = new Redis(server.url);
 * await redis.set('greeting', 'hello');
 * redis.disconnect();
 * await server.stop(); // and its temp directory is gone
 * ```
 * @public
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const bin = options.bin ?? 'redis-server';
  const extra = options.args ?? [];
  const timeoutMs = options.startTimeoutMs ?? 10_000;
  const dir = mkdtempSync(join(tmpdir(), 'floodgate-redis-'));
  let run: Running | undefined;
  let port = 0;
  let lastOutput = '';
  for (let attempt = 0; attempt < 8 && run === undefined; attempt++) {
    port = await freePort();
    const r = await startOn(bin, port, dir, extra, timeoutMs);
    if ('failed' in r) {
      if (r.spawnError?.code === 'ENOENT') {
        rmSync(dir, { recursive: true, force: true });
        throw new Error(INSTALL_HINT, { cause: r.spawnError });
      }
      lastOutput = r.failed;
      // Most likely another process took the port between our probe and the server's bind.
      continue;
    }
    run = r;
  }
  if (run === undefined) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`could not start redis-server:\n${lastOutput}`);
  }

  let current: Running | undefined = run;
  let stopped = false;
  const server: RedisServer = {
    host: HOST,
    port,
    url: `redis://${HOST}:${port}`,
    get pid() {
      return current?.child.pid ?? -1;
    },
    async stop() {
      stopped = true;
      if (current !== undefined) await kill(current);
      current = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      if (stopped) throw new Error('restart() after stop()');
      if (current !== undefined) await kill(current);
      current = undefined;
      // The old socket may linger briefly; redis-server binds with SO_REUSEADDR, but retry anyway.
      let output = '';
      for (let attempt = 0; attempt < 20; attempt++) {
        const r = await startOn(bin, port, dir, extra, timeoutMs);
        if (!('failed' in r)) {
          current = r;
          return;
        }
        output = r.failed;
        await sleep(100);
      }
      throw new Error(`could not restart redis-server on port ${port}:\n${output}`);
    },
  };
  return server;
}
