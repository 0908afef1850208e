// `pnpm --filter @floodgate/example-llm-gateway start`: a throw-away redis-server, the fake
// model, the gateway in front of it, and a paced batch through the gateway; then a table, and
// exit 0 when the batch saw no 429 and every token the model reported was charged.
import { parseDuration } from '@floodgate/core';
import { startRedisServer } from '@floodgate/testkit/redis';
import { makeCalls, runBatch } from './batch.mjs';
import { startFakeModel } from './fake-model.mjs';
import { startGateway } from './gateway.mjs';

/** The limits per API key: requests and tokens per minute, the minute scaled down to 2 s. */
const LIMITS = { requests: 12, tokens: 3000, interval: '2s' };
const CALLS = makeCalls({ count: 30, chars: [200, 800], maxTokens: [100, 400] });
const API_KEY = 'sk-batch-0001';

function table(head, rows) {
  const all = [head, ...rows].map((r) => r.map(String));
  const widths = head.map((_, c) => Math.max(...all.map((r) => r[c].length)));
  const numeric = head.map((_, c) => rows.every((r) => typeof r[c] === 'number'));
  const line = (r) =>
    `  ${r.map((cell, c) => (numeric[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('   ')}`.trimEnd();
  return [
    line(all[0]),
    `  ${widths.map((w) => '-'.repeat(w)).join('   ')}`,
    ...all.slice(1).map(line),
  ].join('\n');
}

let redis;
try {
  redis = await startRedisServer();
} catch (error) {
  console.error(
    `cannot start a throw-away redis-server: ${error instanceof Error ? error.message : error}`,
  );
  console.error(
    'install redis-server (sh scripts/setup-system.sh at the repository root) and retry',
  );
  process.exit(1);
}
const model = await startFakeModel({ msPerToken: 1 });
const gateway = await startGateway({ redisUrl: redis.url, modelUrl: model.url, limits: LIMITS });
let run;
try {
  console.log(
    `LLM gateway: ${LIMITS.requests} requests and ${LIMITS.tokens} tokens per ${LIMITS.interval} per API key (a minute, scaled down),`,
  );
  console.log(`  on a throw-away redis-server at ${redis.host}:${redis.port}`);
  console.log(`  fake model ${model.url}, gateway ${gateway.url} (OpenAI-compatible)`);
  console.log(
    `  batch: ${CALLS.length} chat completions (every other one streamed), 4 at a time, paced by ModelApiPacer\n`,
  );
  run = await runBatch({ url: gateway.url, apiKey: API_KEY, calls: CALLS, concurrency: 4 });
} finally {
  await gateway.close();
  await model.close();
  await redis.stop();
}

const s = gateway.stats;
console.log(
  table(
    ['per API key', `limit per ${LIMITS.interval}`, 'reserved (estimates)', 'charged (settled)'],
    [
      ['requests', LIMITS.requests, s.admitted, s.admitted],
      ['tokens', LIMITS.tokens, s.estimated, s.charged],
    ],
  ),
);
console.log('');
console.log(
  table(
    ['sent', '200', '429', 'tokens the model reported', 'time'],
    [[run.sent, run.ok, run.refused, run.tokens, `${(run.elapsedMs / 1000).toFixed(2)} s`]],
  ),
);
const intervalMs = parseDuration(LIMITS.interval);
/** The least time the limits allow for `used` units of a limit of `limit` per interval, in s. */
const least = (used, limit) => (Math.max(0, (used - limit) / limit) * intervalMs) / 1000;
const settledLeast = Math.max(least(s.admitted, LIMITS.requests), least(s.charged, LIMITS.tokens));
console.log(
  `\n  => ${run.ok} of ${run.sent} answered, ${run.refused} refused. Each call reserved its estimate (prompt + max_tokens) and`,
);
console.log(
  `     was settled at the usage the model reported: ${s.estimated - s.charged} tokens given back to the key as the answers ended.`,
);
console.log(
  `     By what was really used, the limits allow the batch in no less than ${settledLeast.toFixed(2)} s.`,
);

const failures = [];
if (run.refused !== 0) failures.push(`the batch saw ${run.refused} 429s`);
if (run.ok !== run.sent) failures.push(`${run.sent - run.ok} calls did not get a 200`);
if (s.charged !== run.tokens) {
  failures.push(`the gateway charged ${s.charged} tokens, the model reported ${run.tokens}`);
}
for (const f of failures) console.error(`CHECK FAILED: ${f}`);
process.exitCode = failures.length > 0 ? 1 : 0;
// Everything is closed: the process ends on its own; a leaked handle would keep it up.
setTimeout(() => {
  console.error('a handle is still open after the run');
  process.exit(1);
}, 3000).unref();
