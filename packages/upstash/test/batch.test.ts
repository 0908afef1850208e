import { redisBatchTests } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPSTASH } from './adapters.js';

// The batching suite over HTTP. The adapter is not `ordered`, so the suite leaves out the tests
// that read decisions in call order (batch-order.test.ts checks their properties without one);
// the rest need no order: callers woken together go together, a late call and an error inside a
// batch, a quota's period ends per call, and a batch in flight when the bridge's connections to
// Redis are reset (a fault proxy behind the bridge) or the REST endpoint goes away (the bridge
// closed): every call settles as it would have alone.
redisBatchTests({ describe, it, expect, beforeAll, afterAll }, { adapters: [UPSTASH], seed: 30 });
