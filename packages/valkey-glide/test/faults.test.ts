import { redisFaultTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GLIDE } from './adapters.js';

// SCRIPT FLUSH (with and without auto-pipelining), restarts, a server that is down, TTLs.
redisFaultTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [GLIDE], seed: 42 });
