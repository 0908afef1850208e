// Picks the store the four nodes share in scenario (2): REDIS_URL, else a throw-away redis-server,
// else one in-process MemoryStore. The Redis packages are imported lazily so the demo still runs
// (in-process) on a machine or a checkout where they are missing or not built.
import { execFileSync } from 'node:child_process';
import { MemoryStore } from '@floodgate/memory';

function onPath(command) {
  try {
    execFileSync(command, ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

function why(error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND') {
    // Node names either the package or, when its dist/ is missing, a path inside it.
    const m = /node_modules\/((?:@[^/]+\/)?[^/]+)\/|'(@?[^'/][^']*)'/.exec(error.message);
    const name = m?.[1] ?? m?.[2] ?? 'a package';
    return `${name} is not installed or not built`;
  }
  return error instanceof Error ? error.message.split('\n')[0] : String(error);
}

/** One in-process store handed to every node: shared, but only because they share a process. */
function memory(note) {
  const store = new MemoryStore();
  return {
    kind: 'memory',
    label: 'one in-process MemoryStore',
    note,
    makeStore: () => store,
    close: async () => {},
  };
}

/** Each node gets its own connection, as four app processes would; they meet only in Redis. */
async function redis(url, label, stopServer) {
  const [{ IoRedisStore }, { Redis }] = await Promise.all([
    import('@floodgate/ioredis'),
    import('ioredis'),
  ]);
  const clients = [];
  let lastError;
  const open = async (options) => {
    const client = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, ...options });
    clients.push(client);
    // Failures mid-run show up as fallback decisions, which the demo counts and fails on;
    // ioredis would otherwise also print every reconnect attempt.
    client.on('error', (error) => {
      lastError = error;
    });
    await client.connect();
    return client;
  };
  const closeClients = async () => {
    await Promise.allSettled(clients.map((c) => c.quit()));
    for (const c of clients) c.disconnect();
  };
  try {
    // A first connection without retries: an unreachable server is one clear error, not a
    // reconnect loop.
    await (await open({ retryStrategy: () => null })).ping();
  } catch (error) {
    await closeClients();
    throw new Error(`cannot reach ${label}: ${why(lastError ?? error)}`);
  }
  return {
    kind: 'redis',
    label,
    note: undefined,
    makeStore: async () => new IoRedisStore(await open({})),
    close: async () => {
      await closeClients();
      await stopServer?.();
    },
  };
}

/**
 * @param {{ prefer?: 'auto' | 'memory' }} [options]
 * @returns {Promise<{ kind: 'redis' | 'memory', label: string, note?: string,
 *   makeStore: () => import('@floodgate/core/store').Store | Promise<import('@floodgate/core/store').Store>,
 *   close: () => Promise<void> }>}
 */
export async function openSharedStore({ prefer = 'auto' } = {}) {
  if (prefer === 'memory') return memory(undefined);
  const url = process.env.REDIS_URL;
  if (url) {
    // The user asked for this server: failing loudly beats quietly demoing something else.
    return redis(url, `Redis at REDIS_URL (${url.replace(/\/\/[^@/]*@/, '//***@')})`);
  }
  if (!onPath('redis-server')) {
    return memory(
      'REDIS_URL is not set and redis-server is not on PATH (set or install either to see Redis)',
    );
  }
  let server;
  try {
    const { startRedisServer } = await import('@floodgate/testkit/redis');
    server = await startRedisServer();
    return await redis(
      server.url,
      `a throw-away redis-server at ${server.host}:${server.port}`,
      () => server.stop(),
    );
  } catch (error) {
    await server?.stop();
    return memory(`a throw-away redis-server could not be used: ${why(error)}`);
  }
}
