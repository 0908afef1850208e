import { redisClusterTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

// One script per decision on the master owning the identity, on every generation's cluster
// client; a failover is survived (newest generation).
redisClusterTests({ describe, it, expect, beforeAll, afterAll }, { adapters: ADAPTERS });
