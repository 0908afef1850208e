// Scenario (5): limits that change while four app servers run on one store. A customer moves from
// free to pro in the middle of a minute and keeps what it used; an abuser is blocked, then let back
// in, by a fifth process (an admin tool with its own connection, not an app server) through a
// stored override. Every step is a burst through the balancer; the numbers are the servers'.
import { randomUUID } from 'node:crypto';
import { createLimiter, fixedWindow, parseDuration } from '@floodgate/core';
import { burst, startAppNode, startBalancer } from './cluster.mjs';
import { awayFromSeam } from './hot-key.mjs';
import { NODES } from './scenarios.mjs';

export const PLAN_WINDOW = '1m';
export const FREE_LIMIT = 10;
export const PRO_LIMIT = 100;
/**
 * The two plans: one kind, one name, one window, so they count in one key per customer and only
 * the limit read at each decision differs (docs/algorithms.md, "Keys, and a limit that changes").
 */
export const PLANS = {
  free: fixedWindow({ name: 'api', limit: FREE_LIMIT, window: PLAN_WINDOW }),
  pro: fixedWindow({ name: 'api', limit: PRO_LIMIT, window: PLAN_WINDOW }),
};
/** How long the admin tool blocks the abuser for (it lifts the block before then). */
export const BLOCK_MS = 10 * 60_000;
/** Requests per step: 15 on free, 100 more once pro; the abuser 20, 40 while blocked, 20 after. */
export const STEP_REQUESTS = { free: 15, upgraded: 100, abuser: 20, blocked: 40, lifted: 20 };
/** The blocked step is spread out, so the servers' blocked-key caches get to answer. */
const BLOCKED_SPREAD_MS = 200;
/** How long to wait for every server to hear of the clear on the change feed. */
const HEAR_TIMEOUT_MS = 3000;

/**
 * @param {{ shared: Awaited<ReturnType<typeof import('./shared-store.mjs').openSharedStore>> }} options
 */
export async function changingLimits({ shared }) {
  // The accounts table every server reads the customer's plan from, on every request (in an app,
  // a database or a cache of it; here one Map the four servers share).
  const plans = new Map();
  const nodes = [];
  // When each server's store heard, on the change feed, that the abuser's state changed
  // (performance.now()); a store without a feed (in-process) hears nothing and needs none.
  const heard = [];
  const unwatch = [];
  let abuser;
  let balancer;
  try {
    for (let i = 1; i <= NODES; i++) {
      const store = await shared.makeStore();
      const times = [];
      heard.push(times);
      const stop = store.watch?.((change) => {
        if (
          change.type === 'identity' &&
          change.prefix === 'four-nodes' &&
          change.identity === abuser
        )
          times.push(performance.now());
      });
      if (stop) unwatch.push(stop);
      nodes.push(
        await startAppNode({
          name: `app-${i}`,
          store,
          policy: (apiKey) => PLANS[plans.get(apiKey) ?? 'free'],
          overrides: true,
        }),
      );
    }
    balancer = await startBalancer(nodes);
    // The fifth process: its own connection (on Redis), the servers' prefix and policy id.
    const adminStore = await shared.makeStore();
    const admin = createLimiter({
      store: adminStore,
      policy: PLANS.free,
      prefix: 'four-nodes',
      overrides: true,
    });
    // Reads the count as the store holds it (no overrides read, no cache): used = 100 − remaining.
    const meter = createLimiter({
      store: adminStore,
      policy: PLANS.pro,
      prefix: 'four-nodes',
      blockCache: false,
    });

    // All five steps in one fixed window: they take well under a second.
    await awayFromSeam(parseDuration(PLAN_WINDOW));
    // Fresh keys per run: with REDIS_URL the server may still hold the previous run's window.
    const id = randomUUID().slice(0, 8);
    const customer = `cust_${id}`;
    abuser = `abuser_${id}`;
    plans.set(customer, 'free');
    plans.set(abuser, 'pro');

    const steps = [];
    const step = async (name, apiKey, limit, requests, spreadMs = 0) => {
      const before = nodes.map((n) => ({ ...n.stats }));
      const run = await burst({ port: balancer.port, apiKey, requests, spreadMs });
      const diff = (k) => nodes.map((n, i) => n.stats[k] - before[i][k]);
      const sum = (k) => diff(k).reduce((s, v) => s + v, 0);
      const meterDecision = await meter.peek(apiKey);
      steps.push({
        name,
        apiKey,
        limit,
        requests,
        admitted: sum('admitted'),
        denied: sum('denied'),
        cached: sum('cached'),
        fallback: sum('fallback'),
        ok: run.statuses.get(200) ?? 0,
        admittedByNode: diff('admitted'),
        used: PRO_LIMIT - meterDecision.remaining,
      });
    };

    await step('free', customer, `free ${FREE_LIMIT}`, STEP_REQUESTS.free);
    // Billing moves the customer to pro: the servers read it at the next request. No deploy, no reset.
    plans.set(customer, 'pro');
    await step('upgraded', customer, `pro ${PRO_LIMIT}`, STEP_REQUESTS.upgraded);

    await step('abuser', abuser, `pro ${PRO_LIMIT}`, STEP_REQUESTS.abuser);
    const until = Date.now() + BLOCK_MS;
    await admin.override(abuser, { limit: 0, until });
    const stored = await admin.overrides.get(abuser);
    await step('blocked', abuser, 'override 0', STEP_REQUESTS.blocked, BLOCKED_SPREAD_MS);
    // Support lifts the block. A server's next decision reads the store, unless it answers from
    // its blocked-key cache: those hear of the clear on the store's change feed (published right
    // after the clear's script). The demo waits until every server has heard, and says when.
    const clearing = performance.now();
    await admin.overrides.clear(abuser);
    const clearedAt = performance.now();
    const heardMs = await heardAfter(heard, clearing, clearedAt, unwatch.length > 0);
    const cleared = await admin.overrides.get(abuser);
    await step('lifted', abuser, `pro ${PRO_LIMIT}`, STEP_REQUESTS.lifted);

    return {
      customer,
      abuser,
      until,
      stored,
      cleared,
      heardMs,
      steps,
      byName: Object.fromEntries(steps.map((s) => [s.name, s])),
      fallback: steps.reduce((s, r) => s + r.fallback, 0),
    };
  } finally {
    for (const stop of unwatch) stop();
    await balancer?.close();
    await Promise.all(nodes.map((n) => n.close()));
  }
}

/**
 * Per server, ms from the clear's return to the first message about the abuser heard after the
 * clear began (undefined: not heard within HEAR_TIMEOUT_MS); undefined when the store has no feed.
 */
async function heardAfter(heard, since, returned, hasFeed) {
  if (!hasFeed) return undefined;
  const first = () => heard.map((times) => times.find((t) => t >= since));
  const deadline = performance.now() + HEAR_TIMEOUT_MS;
  while (first().some((t) => t === undefined) && performance.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1));
  }
  return first().map((t) => (t === undefined ? undefined : t - returned));
}
