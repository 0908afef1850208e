import { redisFaultTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADAPTERS } from './adapters.js';

// SCRIPT FLUSH, restarts and a server that is down on every generation; TTLs on the newest.
redisFaultTests({ describe, it, expect, beforeAll, afterAll }, { adapters: ADAPTERS, seed: 7 });
