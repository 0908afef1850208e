// Helpers of the settle tests: a limiter of requests and tokens, what an identity has used of
// it, and a client that leaves mid-stream.
import { request as httpRequest } from 'node:http';
import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import { steadyMemoryStore } from './stores.js';

export const TOKENS = 10_000;
/** A limiter of requests and tokens per hour, its windows aligned with the test's clock. */
export function tokenLimiter(
  store: Store = steadyMemoryStore(),
  options: { prefix?: string; timeoutMs?: number } = {},
): Limiter {
  return createLimiter({
    store,
    policy: [
      fixedWindow({ name: 'requests', limit: 100, window: '1h' }),
      fixedWindow({ name: 'tokens', limit: TOKENS, window: '1h' }),
    ],
    ...options,
  });
}

/** What the identity `client` has used of each policy. */
export async function used(limiter: Limiter, key = 'client'): Promise<Record<string, number>> {
  const d = await limiter.peek(key);
  return Object.fromEntries(d.policies.map((p) => [p.name, p.limit - p.remaining]));
}

/**
 * Reads `url` until `events` SSE events came in, runs `meanwhile` (the response still open),
 * then destroys the socket: the client goes away mid-stream. Resolves with the status and what
 * was read.
 */
export function readThenAbort(
  url: string,
  events: number,
  meanwhile: () => Promise<void> = async () => {},
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, (res) => {
      let text = '';
      let done = false;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
        if (done || text.split('\n\n').length - 1 < events) return;
        done = true;
        meanwhile().then(
          () => {
            req.destroy();
            resolve({ status: res.statusCode ?? 0, text });
          },
          (error: unknown) => {
            req.destroy();
            reject(error);
          },
        );
      });
      res.on('error', () => {});
    });
    req.on('error', (error) => {
      if (!req.destroyed) reject(error);
    });
    req.end();
  });
}
