// One "app server" of the chaos run: its own client and store, deciding through the parent's
// fault proxy. Run with `node --import tsx`.
import { serveChaosWorker } from '@floodgate/testkit/redis';
import { ADAPTERS } from './adapters.js';

await serveChaosWorker(ADAPTERS);
