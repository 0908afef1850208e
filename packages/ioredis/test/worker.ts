// One "app server" for the multi-process tests: its own ioredis client and IoRedisStore, taking
// requests from the parent over IPC. Run with `node --import tsx`.
import { serveRedisWorker } from '@floodgate/testkit/redis';
import { ADAPTERS } from './adapters.js';

await serveRedisWorker(ADAPTERS);
