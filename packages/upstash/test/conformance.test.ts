import { redisConformance } from '@floodgate/testkit/redis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UPSTASH, UPSTASH_JSON } from './adapters.js';

// The conformance suite in clock: 'client' and clock: 'server', through HTTP: @upstash/redis
// (base64 responses, and plain JSON with its deserialization on) to the testkit's bridge in front
// of a throw-away redis-server. Redis expires keys on its real clock, and the semantics table
// leaves as little as 50 ms of it before a key it still needs expires: over HTTP on a loaded
// machine a round trip sometimes takes longer (the bench's p99 passes 100 ms). Stretched ×100, as
// the random traces are, that margin is 5 s.
redisConformance(
  { describe, it, expect, beforeAll, afterAll },
  { adapters: [UPSTASH, UPSTASH_JSON], numRuns: 20, semanticsScale: 100 },
);
