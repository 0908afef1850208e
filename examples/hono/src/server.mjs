// A Hono app on Node: 10 requests a minute per API key (per IP for anonymous callers).
import { createLimiter, tokenBucket } from '@floodgate/core';
import { firstKey, headerKey, ipKey } from '@floodgate/http';
import { rateLimit } from '@floodgate/http/hono';
import { MemoryStore } from '@floodgate/memory';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

const limiter = createLimiter({
  store: new MemoryStore(), // or new IoRedisStore(new Redis(url)) to share the limit across processes
  policy: tokenBucket({ name: 'api', limit: 10, interval: '1m' }),
});
const app = new Hono();
// On @hono/node-server the client address comes from the socket; elsewhere pass getAddress.
app.use('*', rateLimit({ limiter, key: firstKey(headerKey('x-api-key'), ipKey()) }));

app.get('/', (c) => c.json({ hello: 'world' }));

serve(
  { fetch: app.fetch, port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' },
  (info) => {
    console.log(`listening on http://127.0.0.1:${info.port}`);
  },
);
