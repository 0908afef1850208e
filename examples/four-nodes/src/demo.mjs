// `pnpm demo`: the problem Floodgate exists for, on real sockets, in three tables; then one hot
// key served past one store with slices; then limits changed while the servers run; then
// requests and tokens per minute for AI traffic.
import {
  AI_DEFAULT_MAX_TOKENS,
  AI_EXPECTED,
  AI_REQUESTS,
  AI_TOKENS,
  AI_WINDOW,
  aiBudgets,
} from './ai-budgets.mjs';
import {
  changingLimits,
  FREE_LIMIT,
  PLAN_WINDOW,
  PRO_LIMIT,
  STEP_REQUESTS,
} from './changing-limits.mjs';
import { HOT_IN_FLIGHT, HOT_LIMIT, HOT_WINDOW, hotKey, SLICE_SIZE } from './hot-key.mjs';
import { fourNodes, INTERVAL, LIMIT, NODES, REQUESTS, seams } from './scenarios.mjs';
import { openSharedStore } from './shared-store.mjs';
import { table } from './table.mjs';

const started = performance.now();
const failures = [];
const check = (ok, message) => {
  if (!ok) failures.push(message);
};
const secs = (ms) => `${(ms / 1000).toFixed(2)} s`;

function nodeTable(run) {
  // Shown only when the limiter had to decide without its store (e.g. Redis went away).
  const fb = run.fallback > 0;
  return table(
    ['node', 'port', '200 admitted', '429 denied', ...(fb ? ['decided by fallback'] : [])],
    run.nodes.map((n) => [n.name, n.port, n.admitted, n.denied, ...(fb ? [n.fallback] : [])]),
    { footer: ['total', '', run.admitted, run.denied, ...(fb ? [run.fallback] : [])] },
  );
}

function describeBurst(run) {
  return `    client: ${run.requests} requests for ${run.apiKey} through a round-robin balancer, in ${secs(run.elapsedMs)}\n`;
}

console.log(
  `Floodgate demo: "${LIMIT} requests a minute per API key", ${NODES} app servers behind a load balancer.`,
);
console.log(
  `Every app server runs createLimiter({ policy: tokenBucket({ limit: ${LIMIT}, interval: '${INTERVAL}' }) }).\n`,
);

// (1)
console.log(`(1) ${NODES} app servers, each counting in its own MemoryStore`);
const alone = await fourNodes();
console.log(describeBurst(alone));
console.log(nodeTable(alone));
console.log(
  `  => ${alone.admitted} of ${alone.requests} passed: the configured ${LIMIT}/min is really ${NODES * LIMIT}/min.\n`,
);
check(alone.admitted === REQUESTS, `(1) expected all ${REQUESTS} to pass, got ${alone.admitted}`);
check(
  alone.ok === alone.admitted,
  `(1) the client saw ${alone.ok} × 200 but the nodes admitted ${alone.admitted}`,
);

// (2)
let shared;
try {
  shared = await openSharedStore();
} catch (error) {
  // Only REDIS_URL gets here: the user named that server, so demoing something else would mislead.
  console.error(`(2) ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
let together;
try {
  console.log(`(2) The same ${NODES} app servers sharing one store: ${shared.label}`);
  if (shared.note) console.log(`    Not Redis: ${shared.note}.`);
  if (shared.kind === 'redis') {
    console.log(
      '    each server has its own ioredis connection; one Lua script per decision, on Redis time',
    );
  }
  together = await fourNodes({ shared });
} finally {
  await shared.close();
}
console.log(describeBurst(together));
console.log(nodeTable(together));
const refill = together.bound - LIMIT;
console.log(
  `  => ${together.admitted} of ${together.requests} passed; the most one bucket can admit in ${secs(together.elapsedMs)}` +
    ` is ${LIMIT} + ${refill} refilled = ${together.bound}.\n`,
);
check(
  together.admitted <= together.bound,
  `(2) ${together.admitted} passed, more than the bound ${together.bound}`,
);
check(
  together.admitted >= LIMIT,
  `(2) only ${together.admitted} passed; a full bucket admits ${LIMIT}`,
);
check(
  together.fallback === 0,
  `(2) ${together.fallback} decisions came from the fallback store, not the shared one`,
);
check(
  together.ok === together.admitted,
  `(2) the client saw ${together.ok} × 200 but the nodes admitted ${together.admitted}`,
);

// (3)
const seam = await seams();
console.log(
  `(3) Each policy under a burst at a window seam (${LIMIT} per ${INTERVAL}, injected clock)`,
);
console.log(
  `    ${LIMIT} requests in the last ${LIMIT} ms before ${new Date(seam.seam).toISOString()}, ${LIMIT} more in the first ${LIMIT} ms after\n`,
);
const verdict = (row) => {
  if (row.kind === 'fixedWindow') {
    return row.total === 2 * LIMIT
      ? `${row.total / LIMIT}x the limit in ${row.spanMs} ms`
      : 'unexpected';
  }
  if (row.total > LIMIT) return 'over the limit';
  if (row.kind === 'leakyBucket')
    return `holds; shaped: the last one starts ${secs(row.maxDelayMs)} later`;
  return 'holds';
};
console.log(
  table(
    ['policy', 'before seam', 'after seam', `in ${2 * LIMIT} ms`, 'verdict'],
    seam.rows.map((r) => [r.label, r.before, r.after, r.total, verdict(r)]),
  ),
);
for (const r of seam.rows) {
  if (r.kind === 'fixedWindow')
    check(r.total === 2 * LIMIT, `(3) fixedWindow admitted ${r.total}, expected ${2 * LIMIT}`);
  else check(r.total <= LIMIT, `(3) ${r.label} admitted ${r.total}, more than ${LIMIT}`);
}

// (4)
let hotStore;
try {
  hotStore = await openSharedStore();
} catch (error) {
  console.error(`(4) ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
let hot;
try {
  console.log(
    `\n(4) One hot API key past one store: ${HOT_LIMIT} requests a minute for a big tenant, ${NODES} app servers sharing ${hotStore.label}`,
  );
  if (hotStore.note) console.log(`    Not Redis: ${hotStore.note}.`);
  console.log(
    `    fixedWindow({ limit: ${HOT_LIMIT}, window: '${HOT_WINDOW}' }); each server has ${HOT_IN_FLIGHT} callers calling until denied.`,
  );
  console.log(
    `    withSlices(limiter, { size: ${SLICE_SIZE} }): once the key is hot, a server leases up to ${SLICE_SIZE + 1} units in one store call and answers the rest itself.\n`,
  );
  hot = [
    await hotKey({ shared: hotStore, size: 0 }),
    await hotKey({ shared: hotStore, size: SLICE_SIZE }),
  ];
} finally {
  await hotStore.close();
}
console.log(
  table(
    [
      'limiter',
      'admitted',
      'denied',
      'decisions',
      'store calls',
      'decisions per store call',
      'time',
    ],
    hot.map((r) => [
      r.size === 0 ? 'createLimiter' : `withSlices size ${r.size}`,
      r.admitted,
      r.denied,
      r.decisions,
      r.storeCalls,
      Math.round(r.decisions / r.storeCalls),
      secs(r.elapsedMs),
    ]),
  ),
);
const [plainRun, slicedRun] = hot;
console.log(
  `  => ${plainRun.admitted} and ${slicedRun.admitted} admitted (limit ${HOT_LIMIT}); with slices the store took ${slicedRun.storeCalls} calls instead of ${plainRun.storeCalls}.`,
);
console.log(
  `     The price: up to ${NODES} × ${SLICE_SIZE} = ${NODES * SLICE_SIZE} units (1 %) beyond a policy in any interval; none past a fixed window's limit.\n`,
);
for (const r of hot) {
  const name = r.size === 0 ? '(4) without slices' : `(4) withSlices size ${r.size}`;
  check(r.errors === 0, `${name}: ${r.errors} calls failed`);
  for (const n of r.windows)
    check(n <= HOT_LIMIT, `${name}: ${n} admitted in one window, more than ${HOT_LIMIT}`);
}
check(
  slicedRun.storeCalls < plainRun.storeCalls,
  `(4) slices took ${slicedRun.storeCalls} store calls, no fewer than ${plainRun.storeCalls} without`,
);

// (5)
let planStore;
try {
  planStore = await openSharedStore();
} catch (error) {
  console.error(`(5) ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
let live;
try {
  console.log(
    `(5) Limits that change while the servers run: ${NODES} app servers sharing ${planStore.label}`,
  );
  if (planStore.note) console.log(`    Not Redis: ${planStore.note}.`);
  console.log(
    `    each request runs the customer's plan, read per request: fixedWindow({ name: 'api', limit: ${FREE_LIMIT} or ${PRO_LIMIT}, window: '${PLAN_WINDOW}' }),`,
  );
  console.log(
    '    one name and window for both plans, so one count per customer; limiters made with { overrides: true }.',
  );
  const admin =
    planStore.kind === 'redis'
      ? 'a 5th process (an admin tool with its own connection)'
      : 'an admin tool (a 5th limiter on the same store)';
  console.log(
    `    ${admin} blocks the abuser with limiter.override(abuser, { limit: 0, until }), then clears it.\n`,
  );
  live = await changingLimits({ shared: planStore });
} finally {
  await planStore.close();
}
const { customer, abuser } = live;
const stepLabel = {
  free: `${customer} on free`,
  upgraded: `billing moves ${customer} to pro`,
  abuser: `${abuser} on pro`,
  blocked: `${abuser} blocked by the admin tool`,
  lifted: 'the admin tool clears the block',
};
console.log(
  table(
    ['step', 'limit', 'sent', '200', '429', '429 from cache', '200 by server', 'used this minute'],
    live.steps.map((r) => [
      stepLabel[r.name],
      r.limit,
      r.requests,
      r.admitted,
      r.denied,
      r.cached,
      r.admittedByNode.join(' + '),
      r.used,
    ]),
  ),
);
const { free, upgraded, blocked, lifted } = live.byName;
console.log(
  `  => ${customer} used ${free.admitted} of free, then got ${upgraded.admitted} more on pro, not ${PRO_LIMIT}: ${upgraded.used} in the minute, pro's limit.`,
);
console.log(
  `     ${abuser} was denied on every server from its next request (until ${new Date(live.until).toISOString()}), charged nothing while blocked,`,
);
const ms = (v) => (v === undefined ? 'never' : `${v.toFixed(1)} ms`);
if (live.heardMs) {
  console.log(
    `     ${blocked.cached} of its ${blocked.denied} 429s while blocked came from the servers' blocked-key caches, without a Redis call;`,
  );
  console.log(
    `     the clear reached those caches on the change feed, ${live.heardMs.map(ms).join(', ')} after it returned (app-1 to app-${NODES}),`,
  );
} else {
  console.log(
    "     (in-process there is no blocked-key cache: every 429 is the store's, and no change feed);",
  );
}
console.log(
  `     and from its next request the abuser had pro's room again: ${lifted.admitted} of ${lifted.requests} admitted, ${lifted.used} used in the minute.\n`,
);
const expected = {
  free: [FREE_LIMIT, STEP_REQUESTS.free - FREE_LIMIT, FREE_LIMIT],
  upgraded: [PRO_LIMIT - FREE_LIMIT, STEP_REQUESTS.upgraded - (PRO_LIMIT - FREE_LIMIT), PRO_LIMIT],
  abuser: [STEP_REQUESTS.abuser, 0, STEP_REQUESTS.abuser],
  blocked: [0, STEP_REQUESTS.blocked, STEP_REQUESTS.abuser],
};
for (const [name, [admitted, denied, used]] of Object.entries(expected)) {
  const r = live.byName[name];
  check(
    r.admitted === admitted && r.denied === denied && r.used === used,
    `(5) ${name}: ${r.admitted} admitted, ${r.denied} denied, ${r.used} used; expected ${admitted}, ${denied}, ${used}`,
  );
}
check(
  lifted.admitted === STEP_REQUESTS.lifted &&
    lifted.denied === 0 &&
    lifted.used === STEP_REQUESTS.abuser + STEP_REQUESTS.lifted,
  `(5) after the clear: ${lifted.admitted} admitted, ${lifted.denied} denied (${lifted.cached} from a cache), ${lifted.used} used`,
);
if (live.heardMs) {
  check(
    live.heardMs.every((v) => v !== undefined),
    `(5) not every server heard of the clear on the change feed: ${live.heardMs.map(ms).join(', ')}`,
  );
}
check(
  live.stored?.limit === 0 && live.stored?.until === live.until && live.cleared === undefined,
  `(5) the override read back as ${JSON.stringify(live.stored)}, then ${JSON.stringify(live.cleared)}`,
);
check(live.fallback === 0, `(5) ${live.fallback} decisions came from the fallback store`);
for (const r of live.steps) {
  check(
    r.ok === r.admitted,
    `(5) ${r.name}: the client saw ${r.ok} × 200, the servers admitted ${r.admitted}`,
  );
}

// (6)
let aiStore;
try {
  aiStore = await openSharedStore();
} catch (error) {
  console.error(`(6) ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
let ai;
try {
  console.log(
    `(6) AI budgets: ${AI_REQUESTS} requests and ${AI_TOKENS} tokens a minute per API key, together, ${NODES} app servers sharing ${aiStore.label}`,
  );
  if (aiStore.note) console.log(`    Not Redis: ${aiStore.note}.`);
  console.log(
    `    policy: [fixedWindow({ name: 'requests', limit: ${AI_REQUESTS}, window: '${AI_WINDOW}' }), fixedWindow({ name: 'tokens', limit: ${AI_TOKENS}, window: '${AI_WINDOW}' })];`,
  );
  console.log(
    `    a call costs { requests: 1, tokens: prompt + max_tokens } (${AI_DEFAULT_MAX_TOKENS} without max_tokens), its real use known only after the model answered.`,
  );
  console.log('    Calls one after the other through the balancer, a fresh API key per step.\n');
  ai = await aiBudgets({ shared: aiStore });
} finally {
  await aiStore.close();
}
const aiLabel = {
  estimate: '40 calls, 1 000 estimated, 300 used: limit() at the estimate',
  settle: '40 calls, 1 000 estimated, 300 used: reserve(), settle()',
  small: '80 calls, 60 estimated, 40 used: reserve(), settle()',
  debt: '1 call, no max_tokens: 1 200 estimated, 12 000 used; then 5 of 60',
};
console.log(
  table(
    [
      'step',
      '200',
      '429',
      'refused by',
      '200 by server',
      'tokens charged',
      'tokens used',
      'left (requests, tokens)',
    ],
    ai.steps.map((r) => [
      aiLabel[r.name],
      r.admitted,
      r.denied,
      r.deniedBy || '-',
      r.admittedByNode.join(' + '),
      r.charged,
      r.used,
      r.left.join(', '),
    ]),
  ),
);
const { estimate: aiEstimate, settle: aiSettle, debt: aiDebt } = ai.byName;
console.log(
  `  => Charged at the estimate, the key got ${aiEstimate.admitted} calls for ${aiEstimate.used} tokens really used; reserved and settled, ${aiSettle.admitted} calls and ${aiSettle.charged} tokens.`,
);
console.log(
  `     A call that used ${aiDebt.charged - AI_TOKENS} tokens more than the minute's ${AI_TOKENS} left the key in debt: refused by tokens for the rest of the window (Retry-After ${aiDebt.retryAfter ?? '?'} s);`,
);
console.log(
  '     a fixed window forgives debt when it ends (docs/ai.md says what each policy does).\n',
);
for (const r of ai.steps) {
  const e = AI_EXPECTED[r.name];
  check(
    r.admitted === e.admitted &&
      r.denied === e.denied &&
      r.deniedBy === e.by &&
      r.charged === e.charged &&
      r.used === e.used &&
      r.left.join() === e.left.join(),
    `(6) ${r.name}: ${r.admitted} admitted, ${r.denied} denied by ${r.deniedBy}, ${r.charged} charged, ${r.used} used, ${r.left.join(', ')} left; expected ${e.admitted}, ${e.denied} by ${e.by}, ${e.charged}, ${e.used}, ${e.left.join(', ')}`,
  );
  check(
    r.ok === r.admitted,
    `(6) ${r.name}: the client saw ${r.ok} × 200, the servers admitted ${r.admitted}`,
  );
}
check(ai.fallback === 0, `(6) ${ai.fallback} decisions came from the fallback store`);

console.log(`Done in ${secs(performance.now() - started)}.`);
if (failures.length > 0) {
  for (const f of failures) console.error(`CHECK FAILED: ${f}`);
  process.exitCode = 1;
}
// Every server and client is closed by now, so the process should exit on its own; if a handle
// leaked, say so instead of hanging the terminal.
setTimeout(() => {
  console.error('a handle is still open after the demo finished');
  process.exit(1);
}, 3000).unref();
