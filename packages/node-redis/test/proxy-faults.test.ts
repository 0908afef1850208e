import { redisProxyFaultTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

// Latency, a stall, cut replies, refused connections (through a real TCP proxy), and SIGSTOP, on
// every node-redis generation (the cut-reply test only where the client survives it).
redisProxyFaultTests({ describe, it, expect, beforeAll, afterAll }, { adapters: ADAPTERS });
