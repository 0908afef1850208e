import { redisClusterTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5 } from './adapters.js';

// One script per decision on the master owning the identity; a failover is survived.
redisClusterTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [IOREDIS_5] });
