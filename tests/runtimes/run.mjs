// Every JavaScript runtime Floodgate claims: the getting-started samples run as shown on workerd,
// Bun and Deno (all from npm), answer 200 and then the 429 contract, and @floodgate/client
// retries against them as the server asked; a second instance of each (another process, or on
// workerd another isolate) shares its count, through the store the sample uses: Upstash's REST
// protocol (the testkit's bridge to a throw-away redis-server), Deno KV (a local file), Durable
// Objects (workerd's own). Before that, the built entry points that claim every runtime are
// checked for Node built-ins.
import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { fetchWithRetry } from '@floodgate/client';
import { redisCommand, startRedisHttpBridge, startRedisServer } from '@floodgate/testkit/redis';
import { root } from '../packaging/workspace.mjs';
import { runClient, runtimeVersion, serve } from './runtimes.mjs';
import { runtimeSamples } from './samples.mjs';
import { scanPortable } from './scan.mjs';
import { WARNING_APP, warningsPrinted } from './warnings.mjs';

const RUNTIMES = ['workerd', 'bun', 'deno'];
// Interrupted, still stop the servers (their process groups are killed on exit).
for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => process.exit(1));
const failures = [];

const portable = scanPortable(root);
for (const p of portable) failures.push(`node built-in: ${p}`);
if (portable.length === 0) console.log('ok   no Node built-in reachable from the portable entries');

// The README says which versions were tested: the ones installed here.
const readme = readFileSync(join(root, 'packages', 'http', 'README.md'), 'utf8');
for (const runtime of RUNTIMES) {
  const version = runtimeVersion(runtime);
  if (
    !new RegExp(`\\b${runtime}\\b[^\\n]*\\b${version.replaceAll('.', '\\.')}\\b`, 'i').test(readme)
  ) {
    failures.push(`packages/http/README.md does not list ${runtime} ${version} as tested`);
  }
}

/** 200s, then a 429 that carries the whole contract; then the client waits it out. */
async function contract({ url, headers, probe }) {
  if (probe.status !== 200)
    throw new Error(`first response: ${probe.status} ${await probe.text()}`);
  assert.match(
    probe.headers.get('ratelimit') ?? '',
    /;r=\d+/,
    'an admitted response has RateLimit',
  );
  const started = Date.now();
  let admitted = 1;
  let denied;
  while (admitted <= 1000) {
    const res = await fetch(url, { headers });
    if (res.status === 429) {
      denied = res;
      break;
    }
    const text = await res.text();
    if (res.status !== 200) throw new Error(`request ${admitted + 1}: ${res.status} ${text}`);
    admitted++;
  }
  assert.ok(denied, `no 429 after ${admitted} requests against a limit of 100 a minute`);
  // The bucket holds 100 and refills one token per 600 ms while the requests go out (one more
  // may have come in between the start-up probe and the first of these).
  const refilled = Math.ceil((Date.now() - started) / 600) + 1;
  assert.ok(admitted >= 100, `only ${admitted} admitted: the burst is 100`);
  assert.ok(
    admitted <= 100 + refilled,
    `${admitted} admitted: more than 100 + ${refilled} refilled`,
  );
  const retryAfter = denied.headers.get('retry-after');
  assert.match(retryAfter ?? '', /^[1-9]\d*$/, `Retry-After in whole seconds: ${retryAfter}`);
  assert.match(denied.headers.get('ratelimit') ?? '', /;r=0\b/, 'RateLimit says none remain');
  assert.ok(denied.headers.get('ratelimit-policy'), 'RateLimit-Policy is sent');
  assert.match(denied.headers.get('content-type') ?? '', /application\/problem\+json/);
  const body = await denied.json();
  assert.equal(body.status, 429);

  // The bucket refills while this runs: call until a call is refused first, then retried.
  const retries = [];
  let res;
  for (let call = 0; call < 300 && retries.length === 0; call++) {
    await res?.arrayBuffer();
    res = await fetchWithRetry(
      url,
      { headers },
      { retries: 3, maxServerJitterMs: 100, onRetry: (e) => retries.push(e) },
    );
  }
  assert.equal(res.status, 200, `the client's retry got ${res.status}`);
  assert.ok(retries.length >= 1, 'the client was refused first, and retried');
  assert.equal(retries[0].source, 'retry-after', 'it waited as the server asked');
  assert.ok(retries[0].delayMs >= Number(retryAfter) * 1000, 'no sooner than Retry-After');
  return `${admitted} admitted, 429 with Retry-After ${retryAfter}, client (node) retried after ${retries[0].delayMs} ms`;
}

/** The client inside the runtime: a call refused first, then admitted after the server's delay. */
async function clientInRuntime(server) {
  const report = await runClient(server);
  assert.equal(report.status, 200, `the in-runtime client ended with ${report.status}`);
  assert.ok(report.retries.length >= 1, `no call was retried in ${report.calls} calls`);
  const [first] = report.retries;
  assert.equal(first.source, 'retry-after', 'it waited as the server asked');
  assert.ok(first.delayMs >= first.serverDelayMs && first.serverDelayMs >= 1000);
  return `client (${server.runtime}) retried after ${first.delayMs} ms`;
}

/**
 * The store is shared: drained through the first instance, a second one refuses too. (On a
 * `MemoryStore` it would count on its own, and admit.) Its probe has counted; the one refill
 * that may land between the two requests leaves it `r=0`.
 */
async function shared(server) {
  const other = await server.another();
  try {
    await other.probe.arrayBuffer();
    let res;
    for (let sent = 0; sent < 300 && res?.status !== 429; sent++) {
      await res?.arrayBuffer();
      res = await fetch(server.url, { headers: server.headers });
    }
    assert.equal(res.status, 429, 'the first instance could not be drained');
    await res.arrayBuffer();
    const there = await fetch(other.url, { headers: other.headers });
    await there.arrayBuffer();
    const remaining = /;r=(\d+)/.exec(there.headers.get('ratelimit') ?? '')?.[1];
    assert.ok(
      there.status === 429 || (there.status === 200 && remaining === '0'),
      `drained through the first instance, the second answered ${there.status} with r=${remaining}: it counts on its own`,
    );
    const which = server.runtime === 'workerd' ? 'isolate' : 'process';
    return `a second ${which} then answered ${there.status}`;
  } catch (e) {
    e.message += `\nsecond instance:\n${other.output()}`;
    throw e;
  } finally {
    await other.stop();
  }
}

// What the samples' stores reach: Redis over HTTP, as Upstash serves it (never the Redis on 6379).
const redis = await startRedisServer();
const bridge = await startRedisHttpBridge({ port: redis.port });
const vars = { UPSTASH_REDIS_REST_URL: bridge.url, UPSTASH_REDIS_REST_TOKEN: bridge.token };

const samples = runtimeSamples(root);
for (const runtime of RUNTIMES) {
  if (!samples.some((s) => s.runtime === runtime)) failures.push(`no sample claims ${runtime}`);
}
rmSync(join(new URL('.', import.meta.url).pathname, '.work'), { recursive: true, force: true });
let n = 0;
for (const sample of samples) {
  const label = `${sample.name} ${runtimeVersion(sample.runtime)}`;
  let server;
  try {
    await redisCommand(redis.port, ['FLUSHALL']); // each sample starts on an empty store
    server = await serve(sample.runtime, sample.code, `${sample.runtime}-${++n}`, {
      vars,
      flags: sample.flags,
    });
    const checks = [await contract(server), await clientInRuntime(server), await shared(server)];
    console.log(`ok   ${label}: ${checks.join(', ')}`);
  } catch (e) {
    failures.push(`${label}: ${e.message}${server ? `\n${server.output()}` : ''}`);
  } finally {
    await server?.stop();
  }
}

// Warnings reach the console on each runtime (workerd's emitWarning prints nothing).
for (const runtime of RUNTIMES) {
  const label = `warnings on ${runtime} ${runtimeVersion(runtime)}`;
  let server;
  try {
    server = await serve(runtime, WARNING_APP, `${runtime}-warnings`);
    console.log(`ok   ${label}: ${await warningsPrinted(server)}`);
  } catch (e) {
    failures.push(`${label}: ${e.message}${server ? `\n${server.output()}` : ''}`);
  } finally {
    await server?.stop();
  }
}

await bridge.close();
await redis.stop();

if (failures.length) {
  console.error(`\n${failures.length} problem(s):\n\n${failures.join('\n\n')}`);
  process.exit(1);
}
console.log('runtimes ok');
