// One "app server" for the invalidation tests: its own client, store and limiters with the
// blocked-key cache on, taking requests from the parent over IPC. Run with `node --import tsx`.
import { serveInvalidationWorker } from '@floodgate/testkit/redis';
import { ADAPTERS } from './adapters.js';

await serveInvalidationWorker(ADAPTERS);
