// One "app server" for the multi-process test: its own node-redis client (each process a
// different node-redis generation) and NodeRedisStore. Run with `node --import tsx`.
import { serveRedisWorker } from '@floodgate/testkit/redis';
import { ADAPTERS } from './adapters.js';

await serveRedisWorker(ADAPTERS);
