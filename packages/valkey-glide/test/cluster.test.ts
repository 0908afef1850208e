import { redisClusterTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLIDE } from './adapters.js';

// GLIDE's Cluster: one script per decision on the master owning the identity; a failover is
// survived (NOSCRIPT on the promoted replica, the state replicated).
redisClusterTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [GLIDE] });
