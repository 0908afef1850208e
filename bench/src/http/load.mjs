// One timed autocannon run against one app. The client runs in the bench's own process, the
// app in its child: on a 2-core machine each gets a core (when nothing else runs).
import autocannon from 'autocannon';
import { HEADER, ROUTE } from './config.mjs';

/** The same identities, in the same order, for every app: `${tag}0000` … */
export function requestsFor(tag, identities) {
  return Array.from({ length: identities }, (_, i) => ({
    method: 'GET',
    path: ROUTE,
    headers: { [HEADER]: `${tag}${String(i).padStart(4, '0')}` },
  }));
}

/**
 * @returns {Promise<{ rps: number, p99: number, p50: number, total: number, ok: number,
 *   limited: number, other: number }>} p99 and p50 in ms, over every response (429s included)
 */
export async function load(port, requests, { seconds, connections }) {
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests,
    // Latency of every response, 429s too: a denial is the answer in the mostly-denied runs.
    excludeErrorStats: false,
  });
  const limited = result.statusCodeStats?.['429']?.count ?? 0;
  const ok = result['2xx'];
  const total = result.requests.total;
  return {
    rps: total / result.duration,
    p99: result.latency.p99,
    p50: result.latency.p50,
    total,
    ok,
    limited,
    other: total - ok - limited + result.errors + result.timeouts,
  };
}
