// A Fastify app: 10 requests a minute per API key (per IP for anonymous callers), and an
// expensive route with its own, tighter limit.
import { createLimiter, fixedWindow, tokenBucket } from '@floodgate/core';
import { firstKey, headerKey, ipKey } from '@floodgate/http';
import { rateLimit } from '@floodgate/http/fastify';
import { MemoryStore } from '@floodgate/memory';
import Fastify from 'fastify';

const store = new MemoryStore(); // or new IoRedisStore(new Redis(url)) to share across processes
const limiter = createLimiter({
  store,
  policy: tokenBucket({ name: 'api', limit: 10, interval: '1m' }),
});
const reports = createLimiter({
  store,
  policy: fixedWindow({ name: 'reports', limit: 2, window: '1m' }),
});
const app = Fastify();
await app.register(rateLimit, { limiter, key: firstKey(headerKey('x-api-key'), ipKey()) });

app.get('/', async () => ({ hello: 'world' }));
app.get('/report', { config: { floodgate: { limiter: reports } } }, async () => ({
  report: 'ready',
}));

await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' });
console.log(`listening on http://127.0.0.1:${app.server.address().port}`);
