// The thundering-herd experiment, shared by test/herd.test.ts and scripts/plot-jitter.mjs:
// `clients` separate clients hit one real node:http server at once; it holds every first request
// until all have arrived, then tells them all "429, Retry-After: N" in the same instant. It
// records when each client comes back, in ms after that instant (`arrivals`), and when each client
// sent its retry, in ms after it received its own 429 (`waits`, timed where fetch is called). One
// process running 200 clients needs a few hundred ms of CPU per wave on a busy machine, which
// spreads the arrivals even when every client waits exactly the same time.
import { once } from 'node:events';
import { createServer } from 'node:http';

/**
 * @param {{ withRetry: Function, clients?: number, retryAfterSeconds?: number, options?: object }} run
 * @returns {Promise<{ arrivals: number[], waits: number[], planned: number[], firstWaveMs: number,
 *   retryWaveMs: number, late: number[] }>} sorted, in ms (`planned`: the delay each onRetry
 *   announced; `late`: how long after its planned delay each client actually sent;
 *   `firstWaveMs`/`retryWaveMs`: from the first to the last client sending its first request,
 *   and its retry)
 */
export async function runHerd({ withRetry, clients = 200, retryAfterSeconds = 2, options = {} }) {
  const held = [];
  const arrivals = [];
  const waits = [];
  const planned = [];
  const late = [];
  const plannedBy = new Map();
  const firstSends = [];
  const retrySends = [];
  const received = new Map();
  const seen = new Set();
  let releasedAt = 0;
  const server = createServer((req, res) => {
    const id = req.headers['x-client'];
    if (!seen.has(id)) {
      seen.add(id);
      held.push(res);
      if (held.length === clients) {
        releasedAt = performance.now();
        for (const r of held) r.writeHead(429, { 'Retry-After': String(retryAfterSeconds) }).end();
      }
      return;
    }
    const now = performance.now();
    arrivals.push(now - releasedAt);
    res.writeHead(200).end('ok');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${server.address().port}/`;
  try {
    const statuses = await Promise.all(
      Array.from({ length: clients }, (_, i) =>
        withRetry(
          (input, init) => {
            const now = performance.now();
            if (received.has(String(i))) {
              waits.push(now - received.get(String(i)));
              late.push(now - received.get(String(i)) - plannedBy.get(String(i)));
              retrySends.push(now);
            } else firstSends.push(now);
            return fetch(input, init);
          },
          {
            ...options,
            onRetry: (event) => {
              planned.push(event.delayMs);
              plannedBy.set(String(i), event.delayMs);
              received.set(String(i), performance.now());
            },
          },
        )(url, { headers: { 'x-client': String(i) } }).then(async (res) => {
          await res.arrayBuffer();
          return res.status;
        }),
      ),
    );
    if (statuses.some((s) => s !== 200)) throw new Error(`unexpected statuses: ${statuses}`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
  const byTime = (a, b) => a - b;
  return {
    arrivals: arrivals.sort(byTime),
    waits: waits.sort(byTime),
    planned: planned.sort(byTime),
    late: late.sort(byTime),
    firstWaveMs: Math.max(...firstSends) - Math.min(...firstSends),
    retryWaveMs: Math.max(...retrySends) - Math.min(...retrySends),
  };
}

/** Counts per `binMs` slice, from `fromMs`. */
export function histogram(arrivals, fromMs, toMs, binMs) {
  const bins = new Array(Math.ceil((toMs - fromMs) / binMs)).fill(0);
  for (const t of arrivals) {
    const i = Math.floor((t - fromMs) / binMs);
    if (i >= 0 && i < bins.length) bins[i] += 1;
  }
  return bins;
}

/** The spread of the middle 80 %: p90 − p10 of sorted values. */
export function spread80(sorted) {
  const at = (q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return at(0.9) - at(0.1);
}

/** The most arrivals inside any window of `windowMs`. */
export function densest(arrivals, windowMs) {
  let best = 0;
  let lo = 0;
  for (let hi = 0; hi < arrivals.length; hi++) {
    while (arrivals[hi] - arrivals[lo] > windowMs) lo++;
    best = Math.max(best, hi - lo + 1);
  }
  return best;
}
