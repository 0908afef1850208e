// Compiled with lib checks on (test/types/tsconfig.json): @fastify/rate-limit's declarations and
// ours must merge cleanly, as in an app migrating route by route (TS2717 on `config.rateLimit`
// while both declared it).
import fastifyRateLimit from '@fastify/rate-limit';
import { fixedWindow } from '@floodgate/core';
import Fastify from 'fastify';
import { rateLimit } from '../../src/fastify/index.js';

const app = Fastify();
await app.register(fastifyRateLimit, { global: false });
await app.register(rateLimit, { global: false });
app.get(
  '/',
  {
    config: {
      rateLimit: { max: 5, timeWindow: '1m' },
      floodgate: { policy: fixedWindow({ limit: 2, window: '1m' }) },
    },
  },
  async (request) => ({ left: request.rateLimit?.remaining }),
);
