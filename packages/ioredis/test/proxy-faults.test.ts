import { redisProxyFaultTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IOREDIS_5 } from './adapters.js';

// Latency, a stall, cut replies, refused connections (through a real TCP proxy), and SIGSTOP.
redisProxyFaultTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [IOREDIS_5] });
