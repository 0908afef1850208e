// ad-hoc: Node CPU per sequential decision, interleaved chunks
import { Redis } from 'ioredis';
import { createLimiter } from '@floodgate/core';
import { IoRedisStore } from '@floodgate/ioredis';
import { RedisStore as RateLimitRedis } from 'rate-limit-redis';
import { policyOf } from './src/contenders.mjs';
import { scriptFor, encodeScriptArgs } from '@floodgate/core/redis';
const client = new Redis('redis://127.0.0.1:7811', { enableAutoPipelining: false });
await client.flushall();
const keys = Array.from({ length: 10000 }, (_, i) => `user-${i}`);
const fw = createLimiter({ store: new IoRedisStore(client), policy: policyOf('fixedWindow', 500000, 86400000) });
const tb = createLimiter({ store: new IoRedisStore(client), policy: policyOf('tokenBucket', 500000, 86400000) });
const rlr = new RateLimitRedis({ sendCommand: (...a) => client.call(...a) }); rlr.init({ windowMs: 86400000 });
const pol = [policyOf('fixedWindow', 500000, 86400000)];
const script = scriptFor(pol);
await client.call('SCRIPT', 'LOAD', script.source);
const raw = (k) => client.call('EVALSHA', [script.sha1, '1', `floodgate:{${k}}:fw`, ...encodeScriptArgs({ keys: [], policies: pol, cost: 1, mode: 'limit' })]);
const st = new IoRedisStore(client);
import { keysFor } from '@floodgate/testkit/redis';
const storeCall = (k) => st.evaluate({ keys: [`floodgate:{${k}}:fw`], policies: pol, cost: 1, mode: 'limit' });
const c = { store: storeCall, fw: (k) => fw.limit(k), tb: (k) => tb.limit(k), rlr: (k) => rlr.increment(k), raw };
const only = process.argv[2];
const res = {};
for (let round = 0; round < (only ? 12 : 6); round++) {
  for (const [name, f] of Object.entries(c)) {
    if (only && name !== only) continue;
    const n = 4000; const u0 = process.cpuUsage(); const t0 = performance.now();
    for (let i = 0; i < n; i++) await f(`x${keys[(i * 7919 + round) % 10000]}`);
    const u = process.cpuUsage(u0); const dt = performance.now() - t0;
    if (round > 0) (res[name] ??= []).push([(u.user + u.system) / n, n / dt * 1000]);
  }
}
for (const [k, v] of Object.entries(res)) {
  const cpu = v.map((x) => x[0]).sort((a, b) => a - b); const ops = v.map((x) => x[1]).sort((a, b) => a - b);
  console.log(k.padEnd(5), 'cpu µs', cpu[2].toFixed(1), 'ops/s', ops[2].toFixed(0));
}
client.disconnect();
