import { fileURLToPath } from 'node:url';
import { redisClusterEventTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLIDE } from './adapters.js';

// Resharding (a slot migrated under load, ASK and MOVED) and failover, with app servers in
// separate processes, each with its own GLIDE cluster client.
redisClusterEventTests(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: [GLIDE], worker: fileURLToPath(new URL('./cluster-worker.ts', import.meta.url)) },
);
