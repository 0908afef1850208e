// One "app server" on a Redis Cluster for the resharding test: its own cluster client and store,
// deciding for the identities the parent names. Run with `node --import tsx`.
import { serveRedisClusterWorker } from '@floodgate/testkit/redis';
import { ADAPTERS } from './adapters.js';

await serveRedisClusterWorker(ADAPTERS);
