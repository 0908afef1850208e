// An Express app limited to 10 requests a minute per API key (per IP for anonymous callers).
import { createLimiter, tokenBucket } from '@floodgate/core';
import { firstKey, headerKey, ipKey } from '@floodgate/http';
import { rateLimit } from '@floodgate/http/express';
import { MemoryStore } from '@floodgate/memory';
import express from 'express';

const limiter = createLimiter({
  store: new MemoryStore(), // or new IoRedisStore(new Redis(url)) to share the limit across processes
  policy: tokenBucket({ name: 'api', limit: 10, interval: '1m' }),
});
const app = express();
app.use(
  rateLimit({
    limiter,
    key: firstKey(headerKey('x-api-key'), ipKey()),
    retryAfterJitter: [0, '2s'],
  }),
);

app.get('/', (_req, res) => res.json({ hello: 'world' }));

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`);
});
