// Scenario (6): budgets for AI traffic. Four app servers sharing one store limit each API key to
// requests *and* tokens per minute, together: one call costs { requests: 1, tokens: n }. A call's
// tokens are only known once the model has answered, so a server either charges the estimate
// (prompt + max_tokens) and never corrects it, or reserves the estimate and settles it at the
// real use. Every step is a run of calls through the balancer, one after the other, so the
// numbers are exact.
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { createLimiter, fixedWindow, parseDuration } from '@floodgate/core';
import { listen, shut, startBalancer } from './cluster.mjs';
import { awayFromSeam } from './hot-key.mjs';
import { NODES } from './scenarios.mjs';

export const AI_WINDOW = '1m';
export const AI_REQUESTS = 60;
export const AI_TOKENS = 10_000;
/** The completion estimated for a call that sets no max_tokens. */
export const AI_DEFAULT_MAX_TOKENS = 1000;
/** One count of requests and one of tokens per API key, per minute. */
export const AI_POLICIES = [
  fixedWindow({ name: 'requests', limit: AI_REQUESTS, window: AI_WINDOW }),
  fixedWindow({ name: 'tokens', limit: AI_TOKENS, window: AI_WINDOW }),
];
const PREFIX = 'demo-ai';

const calls = (n, call) => Array.from({ length: n }, () => call);
/** A chat call: its prompt tokens, the `max_tokens` it asks for, and what the model will write. */
const MEDIUM = { prompt: 200, maxTokens: 800, answer: 100 }; // estimate 1 000, uses 300
const SMALL = { prompt: 20, maxTokens: 40, answer: 20 }; // estimate 60, uses 40
const UNCAPPED = { prompt: 200, maxTokens: undefined, answer: 11_800 }; // estimate 1 200, uses 12 000

/**
 * The steps, each for a fresh API key. `route`: '/estimate' charges the estimate with
 * `limiter.limit`; '/reserve' reserves it and settles at the real use.
 */
export const AI_STEPS = [
  { name: 'estimate', route: '/estimate', calls: calls(40, MEDIUM) },
  { name: 'settle', route: '/reserve', calls: calls(40, MEDIUM) },
  { name: 'small', route: '/reserve', calls: calls(80, SMALL) },
  { name: 'debt', route: '/reserve', calls: [UNCAPPED, ...calls(5, SMALL)] },
];

/**
 * What each step must come to.
 * - estimate: 10 × 1 000 fill the 10 000 tokens; the model used 10 × 300.
 * - settle: a call is admitted while 300 × n + 1 000 ≤ 10 000, so 31, charged 9 300.
 * - small: 60 requests a minute bind first; 60 × 40 tokens.
 * - debt: 1 200 reserved, 12 000 settled, 2 000 past the limit: the next 5 are refused by tokens
 *   until the window ends (a fixed window forgives the debt then).
 */
export const AI_EXPECTED = {
  estimate: { admitted: 10, denied: 30, by: 'tokens', charged: 10_000, used: 3000, left: [50, 0] },
  settle: { admitted: 31, denied: 9, by: 'tokens', charged: 9300, used: 9300, left: [29, 700] },
  small: { admitted: 60, denied: 20, by: 'requests', charged: 2400, used: 2400, left: [0, 7600] },
  debt: { admitted: 1, denied: 5, by: 'tokens', charged: 12_000, used: 12_000, left: [59, 0] },
};

/**
 * One app server in front of a stand-in model: the JSON body says the call's prompt tokens, its
 * `max_tokens`, and (the stand-in's part) how many tokens the model will write.
 */
async function startAiNode({ name, store }) {
  const limiter = createLimiter({ store, policy: AI_POLICIES, prefix: PREFIX });
  const stats = { name, admitted: 0, denied: 0, fallback: 0, charged: 0, used: 0 };
  const server = http.createServer(async (req, res) => {
    const key = req.headers['x-api-key'];
    const chunks = [];
    for await (const c of req) chunks.push(c);
    try {
      const call = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      const estimate = call.prompt + (call.maxTokens ?? AI_DEFAULT_MAX_TOKENS);
      const cost = { requests: 1, tokens: estimate };
      const reserving = req.url === '/reserve';
      const d = reserving
        ? await limiter.reserve(key, { cost })
        : await limiter.limit(key, { cost });
      if (d.reason === 'store-unavailable' || d.reason === 'store-timeout') stats.fallback++;
      if (!d.allowed) {
        stats.denied++;
        const by = d.policies.filter((p) => !p.allowed).map((p) => p.name);
        res
          .writeHead(429, {
            'x-served-by': name,
            'x-denied-by': by.join(','),
            'retry-after': String(Math.ceil(d.retryAfterMs / 1000)),
          })
          .end();
        return;
      }
      // The model answers; only now is the call's real use known.
      const used = call.prompt + call.answer;
      if (reserving) await d.settle({ requests: 1, tokens: used });
      stats.admitted++;
      stats.charged += reserving ? used : estimate;
      stats.used += used;
      res
        .writeHead(200, { 'x-served-by': name, 'content-type': 'application/json' })
        .end(JSON.stringify({ usage: { total_tokens: used } }));
    } catch (error) {
      res.writeHead(500, { 'x-served-by': name }).end(String(error));
    }
  });
  const port = await listen(server);
  return { name, port, stats, close: () => shut(server) };
}

/** Sends `calls` one after the other; each answer before the next call. */
async function sequence({ port, apiKey, route, calls: list }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const answers = [];
  try {
    for (const call of list) {
      answers.push(
        await new Promise((resolve, reject) => {
          const req = http.request(
            {
              host: '127.0.0.1',
              port,
              path: route,
              method: 'POST',
              headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
              agent,
            },
            (res) => {
              res.resume();
              res.on('end', () =>
                resolve({
                  status: res.statusCode,
                  deniedBy: res.headers['x-denied-by'],
                  retryAfter: res.headers['retry-after'],
                }),
              );
            },
          );
          req.on('error', reject);
          req.end(JSON.stringify(call));
        }),
      );
    }
  } finally {
    agent.destroy();
  }
  return answers;
}

/**
 * @param {{ shared: Awaited<ReturnType<typeof import('./shared-store.mjs').openSharedStore>> }} options
 */
export async function aiBudgets({ shared }) {
  const nodes = [];
  let balancer;
  try {
    for (let i = 1; i <= NODES; i++) {
      nodes.push(await startAiNode({ name: `app-${i}`, store: await shared.makeStore() }));
    }
    balancer = await startBalancer(nodes);
    // Reads each key's counts as the store holds them (no blocked-key cache).
    const meter = createLimiter({
      store: await shared.makeStore(),
      policy: AI_POLICIES,
      prefix: PREFIX,
      blockCache: false,
    });
    // Every step in one fixed window: they take well under a second.
    await awayFromSeam(parseDuration(AI_WINDOW));
    const id = randomUUID().slice(0, 8);
    const steps = [];
    for (const step of AI_STEPS) {
      const apiKey = `ai_${step.name}_${id}`;
      const before = nodes.map((n) => ({ ...n.stats }));
      const answers = await sequence({ port: balancer.port, apiKey, ...step });
      const diff = (k) => nodes.map((n, i) => n.stats[k] - before[i][k]);
      const sum = (k) => diff(k).reduce((s, v) => s + v, 0);
      const left = await meter.peek(apiKey);
      const refused = answers.filter((a) => a.status === 429);
      steps.push({
        name: step.name,
        route: step.route,
        sent: step.calls.length,
        admitted: sum('admitted'),
        denied: sum('denied'),
        fallback: sum('fallback'),
        ok: answers.filter((a) => a.status === 200).length,
        admittedByNode: diff('admitted'),
        /** The policies named by the 429s, deduplicated: `tokens`, `requests`, or both. */
        deniedBy: [...new Set(refused.flatMap((a) => String(a.deniedBy ?? '').split(',')))]
          .filter(Boolean)
          .join(','),
        /** The last 429's Retry-After, in seconds. */
        retryAfter: refused.length > 0 ? Number(refused.at(-1).retryAfter) : undefined,
        charged: sum('charged'),
        used: sum('used'),
        left: ['requests', 'tokens'].map(
          (name) => left.policies.find((p) => p.name === name)?.remaining,
        ),
      });
    }
    return {
      steps,
      byName: Object.fromEntries(steps.map((s) => [s.name, s])),
      fallback: steps.reduce((s, r) => s + r.fallback, 0),
    };
  } finally {
    await balancer?.close();
    await Promise.all(nodes.map((n) => n.close()));
  }
}
