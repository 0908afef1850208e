// What a user on one Node version does with the built packages. run.mjs starts this file with
// each Node binary in turn (`<node> smoke.mjs <redis-url>`); it prints one line, `ok <json>`,
// and exits 0, or throws. It imports the workspace's own dist (the @floodgate/* dependencies are
// workspace links), never a source file.
import { createServer } from 'node:http';
import { createRequire } from 'node:module';
import { sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { exportPaths, publishedPackages, specifier } from '../packaging/workspace.mjs';

const redisUrl = process.argv[2];
if (!redisUrl) throw new Error('usage: node smoke.mjs <redis-url>');
const require = createRequire(import.meta.url);
const done = [];

function fromDist(spec, file, extension) {
  if (!file.includes(`${sep}dist${sep}`) || !file.endsWith(extension)) {
    throw new Error(`${spec} resolved to ${file}, not a built ${extension} file in dist/`);
  }
}

// 1. Every exports path of every published package, from ESM and from CJS.
const specs = publishedPackages().flatMap(({ pkg }) =>
  exportPaths(pkg).map((path) => specifier(pkg, path)),
);
for (const spec of specs) {
  fromDist(spec, fileURLToPath(import.meta.resolve(spec)), '.js');
  const ns = await import(spec);
  if (Object.keys(ns).length === 0) throw new Error(`${spec} exports nothing from ESM`);
}
for (const spec of specs) {
  fromDist(spec, require.resolve(spec), '.cjs');
  const ns = require(spec);
  if (Object.keys(ns).length === 0) throw new Error(`${spec} exports nothing from CJS`);
}
done.push(`${specs.length} entry points × ESM, CJS`);

const { createLimiter, tokenBucket } = await import('@floodgate/core');
const { MemoryStore } = await import('@floodgate/memory');
const policy = () => tokenBucket({ limit: 2, interval: '1m' });

/** Three requests against a limit of 2: allowed, allowed, denied. */
async function threeDecisions(what, limiter) {
  const seen = [];
  for (let i = 0; i < 3; i++) seen.push((await limiter.limit('smoke')).allowed);
  if (seen.join() !== 'true,true,false') {
    throw new Error(`${what}: decisions ${seen.join()}, expected true,true,false`);
  }
  done.push(what);
}

// 2. A decision in memory, from ESM and from the CJS build.
await threeDecisions(
  'MemoryStore (ESM)',
  createLimiter({ store: new MemoryStore(), policy: policy() }),
);
{
  const core = require('@floodgate/core');
  const { MemoryStore: CjsMemoryStore } = require('@floodgate/memory');
  await threeDecisions(
    'MemoryStore (CJS)',
    core.createLimiter({
      store: new CjsMemoryStore(),
      policy: core.tokenBucket({ limit: 2, interval: '1m' }),
    }),
  );
}

// 3. Decisions through Redis, with each Redis client. The keys carry this Node's version: the
// versions share one server.
const prefix = (client) => `node-versions:${process.version}:${client}`;
// A store error throws: the default would decide with the in-process fallback instead.
const options = { onStoreError: 'throw' };
/** The decisions left keys on the server: Redis decided, not a fallback. */
function keysWritten(what, keys) {
  if (keys.length === 0) throw new Error(`${what}: no key under its prefix on the server`);
}
{
  const { Redis } = await import('ioredis');
  const { IoRedisStore } = await import('@floodgate/ioredis');
  const redis = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  try {
    await threeDecisions(
      'IoRedisStore (ioredis)',
      createLimiter({
        store: new IoRedisStore(redis),
        policy: policy(),
        prefix: prefix('ioredis'),
        ...options,
      }),
    );
    keysWritten('ioredis', await redis.keys(`*${prefix('ioredis')}*`));
  } finally {
    redis.disconnect();
  }
}
{
  const { createClient } = await import('redis');
  const { NodeRedisStore } = await import('@floodgate/node-redis');
  const client = createClient({ url: redisUrl });
  client.on('error', () => {});
  await client.connect();
  try {
    await threeDecisions(
      'NodeRedisStore (redis)',
      createLimiter({
        store: new NodeRedisStore(client),
        policy: policy(),
        prefix: prefix('redis'),
        ...options,
      }),
    );
    keysWritten('redis', await client.keys(`*${prefix('redis')}*`));
  } finally {
    await client.close();
  }
}

{
  const { Valkey } = await import('iovalkey');
  const { IoValkeyStore } = await import('@floodgate/iovalkey');
  const valkey = new Valkey(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await valkey.connect();
  try {
    await threeDecisions(
      'IoValkeyStore (iovalkey)',
      createLimiter({
        store: new IoValkeyStore(valkey),
        policy: policy(),
        prefix: prefix('iovalkey'),
        ...options,
      }),
    );
    keysWritten('iovalkey', await valkey.keys(`*${prefix('iovalkey')}*`));
  } finally {
    valkey.disconnect();
  }
}
{
  // GLIDE's Rust core is a native addon: this loads it on this Node's ABI.
  const { GlideClient, Logger } = await import('@valkey/valkey-glide');
  const { GlideStore } = await import('@floodgate/valkey-glide');
  Logger.setLoggerConfig('error'); // it logs the NOSCRIPT the store answers as a warning
  const { hostname, port } = new URL(redisUrl);
  const glide = await GlideClient.createClient({
    addresses: [{ host: hostname, port: Number(port) }],
  });
  try {
    await threeDecisions(
      'GlideStore (valkey-glide)',
      createLimiter({
        store: new GlideStore(glide),
        policy: policy(),
        prefix: prefix('glide'),
        ...options,
      }),
    );
    keysWritten('valkey-glide', await glide.customCommand(['KEYS', `*${prefix('glide')}*`]));
  } finally {
    glide.close();
  }
}

// 4. One HTTP round trip through the node:http adapter: 200 with the RateLimit headers, then 429
// with Retry-After.
{
  const { rateLimit } = await import('@floodgate/http/node');
  const limit = rateLimit({
    limiter: createLimiter({
      store: new MemoryStore(),
      policy: tokenBucket({ limit: 1, interval: '1m' }),
    }),
  });
  const server = createServer(async (req, res) => {
    if (!(await limit(req, res))) return;
    res.end('ok');
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/`;
  try {
    const first = await fetch(url);
    const body = await first.text();
    if (first.status !== 200 || body !== 'ok' || !first.headers.get('ratelimit')) {
      throw new Error(
        `first request: ${first.status} ${JSON.stringify(body)}, RateLimit ${first.headers.get('ratelimit')}`,
      );
    }
    const second = await fetch(url);
    await second.arrayBuffer();
    if (second.status !== 429 || !second.headers.get('retry-after')) {
      throw new Error(
        `second request: ${second.status}, Retry-After ${second.headers.get('retry-after')}`,
      );
    }
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  done.push('http/node 200 then 429');
}

console.log(`ok ${JSON.stringify(done)}`);
