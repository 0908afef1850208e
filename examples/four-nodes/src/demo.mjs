// `pnpm demo`: the problem Floodgate exists for, on real sockets, in three tables; then one hot
// key served past one store with slices.
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
