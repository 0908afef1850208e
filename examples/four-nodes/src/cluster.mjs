// Real sockets on loopback: the point of the demo is that nothing here is simulated except the
// clock in the seam scenario.

import { once } from 'node:events';
import http from 'node:http';
import { createLimiter } from '@floodgate/core';

export async function listen(server) {
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return server.address().port;
}

export function shut(server) {
  // Keep-alive sockets would otherwise hold close() open until they time out.
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/**
 * One app server keyed by the `x-api-key` header. `policy` is one policy, or a function of the API
 * key choosing the policy per request (a customer's plan, read on every request): the server
 * builds one limiter per policy on first use, as `@floodgate/http` does, each over `store`.
 * `overrides` makes them read stored per-identity overrides (`limiter.override`).
 * @param {{ name: string, store: import('@floodgate/core/store').Store,
 *   policy: import('@floodgate/core').Policy | ((apiKey: string) => import('@floodgate/core').Policy),
 *   overrides?: boolean }} options
 */
export async function startAppNode({ name, store, policy, overrides = false }) {
  const limiters = new Map();
  const limiterFor = (key) => {
    const p = typeof policy === 'function' ? policy(key) : policy;
    let limiter = limiters.get(p);
    if (limiter === undefined) {
      limiter = createLimiter({ store, policy: p, prefix: 'four-nodes', overrides });
      limiters.set(p, limiter);
    }
    return limiter;
  };
  // `cached`: denials the limiter answered from its blocked-key cache, without a store call.
  const stats = { name, admitted: 0, denied: 0, fallback: 0, cached: 0 };
  const server = http.createServer(async (req, res) => {
    const key = req.headers['x-api-key'];
    if (typeof key !== 'string' || key === '') {
      res.writeHead(401, { 'content-type': 'text/plain' }).end('x-api-key required\n');
      return;
    }
    try {
      const d = await limiterFor(key).limit(key);
      // A decision taken by the limiter's fallback is not the shared store's: count it apart,
      // so a Redis hiccup cannot pass for a working shared limit.
      if (d.reason === 'store-unavailable' || d.reason === 'store-timeout') stats.fallback++;
      if (d.allowed) {
        stats.admitted++;
        res.writeHead(200, { 'x-served-by': name, 'content-type': 'text/plain' }).end('ok\n');
      } else {
        stats.denied++;
        if (d.reason === 'blocked-cache') stats.cached++;
        const retryAfter = String(Math.ceil(d.retryAfterMs / 1000));
        res.writeHead(429, { 'x-served-by': name, 'retry-after': retryAfter }).end();
      }
    } catch (error) {
      res.writeHead(500, { 'x-served-by': name }).end(String(error));
    }
  });
  const port = await listen(server);
  return { name, port, stats, close: () => shut(server) };
}

/** A round-robin reverse proxy in front of `nodes`, as a load balancer would be. */
export async function startBalancer(nodes) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
  let next = 0;
  const server = http.createServer((req, res) => {
    const target = nodes[next++ % nodes.length];
    const upstream = http.request(
      {
        host: '127.0.0.1',
        port: target.port,
        path: req.url,
        method: req.method,
        headers: req.headers,
        agent,
      },
      (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    upstream.on('error', () => {
      if (!res.headersSent) res.writeHead(502);
      res.end();
    });
    req.pipe(upstream);
  });
  const port = await listen(server);
  return {
    port,
    close: async () => {
      await shut(server);
      agent.destroy();
    },
  };
}

/**
 * Sends `requests` GETs for one API key, evenly spaced over `spreadMs`, without waiting for
 * answers in between (a burst, not a polite loop).
 * @returns {Promise<{ statuses: Map<number, number>, servedBy: Map<string, number>, elapsedMs: number }>}
 */
export async function burst({ port, apiKey, requests, spreadMs }) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });
  const statuses = new Map();
  const servedBy = new Map();
  const get = () =>
    new Promise((resolve, reject) => {
      const req = http.get(
        { host: '127.0.0.1', port, path: '/', headers: { 'x-api-key': apiKey }, agent },
        (res) => {
          res.resume();
          res.on('end', () => {
            statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
            const node = String(res.headers['x-served-by'] ?? '?');
            servedBy.set(node, (servedBy.get(node) ?? 0) + 1);
            resolve();
          });
        },
      );
      req.on('error', reject);
    });
  const gap = requests > 1 ? spreadMs / (requests - 1) : 0;
  const started = performance.now();
  const pending = [];
  for (let i = 0; i < requests; i++) {
    const due = started + i * gap;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(get());
  }
  try {
    await Promise.all(pending);
  } finally {
    agent.destroy();
  }
  // From the first request sent to the last answer received: every decision was taken in here.
  return { statuses, servedBy, elapsedMs: performance.now() - started };
}
