import { request as httpRequest } from 'node:http';
import { createLimiter, type Limiter, type Policy } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import { afterEach } from 'vitest';
import type { RateLimitOptions } from '../../src/index.js';
import type { AppHandle, Harness, StoreFactory } from './harness.js';

/** A fixed instant 250 ms into a 10 s window: a fresh fixed-window limit resets in 9 750 ms. */
export const T0 = 1_700_000_000_250;

export interface Reply {
  readonly status: number;
  readonly headers: Headers;
  readonly text: string;
  readonly elapsedMs: number;
  json(): unknown;
}

/** One real request. */
export async function send(url: string, headers: Record<string, string> = {}): Promise<Reply> {
  const started = performance.now();
  const res = await fetch(url, { headers });
  const text = await res.text();
  return {
    status: res.status,
    headers: res.headers,
    text,
    elapsedMs: performance.now() - started,
    json: () => JSON.parse(text),
  };
}

/** Sends a request and drops the connection after `afterMs`, while the server still holds it. */
export function sendAndHangUp(url: string, afterMs: number): Promise<void> {
  return new Promise((resolve) => {
    const req = httpRequest(url);
    req.on('error', () => resolve());
    req.on('response', (res) => {
      res.resume();
      resolve();
    });
    req.end();
    setTimeout(() => {
      req.destroy();
      resolve();
    }, afterMs);
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export interface SuiteContext {
  readonly harness: Harness;
  readonly stores: StoreFactory;
  /** A limiter on a fresh store (and a fresh key prefix, for shared stores). */
  limiter(
    policy: Policy | readonly Policy[],
    extra?: {
      now?: () => number;
      store?: Store;
      onStoreError?: 'throw' | 'allow' | 'deny' | Store;
    },
  ): Limiter;
  /** Starts the harness's app; closed after the test. */
  start(options: RateLimitOptions, listen?: { host?: string }): Promise<AppHandle>;
}

let sequence = 0;

export function suiteContext(harness: Harness, stores: StoreFactory): SuiteContext {
  const open: AppHandle[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((app) => app.close()));
  });
  return {
    harness,
    stores,
    limiter(policy, extra = {}) {
      const options: Parameters<typeof createLimiter>[0] = {
        store: extra.store ?? stores.make(extra.now),
        policy,
        prefix: `http-${process.pid}-${++sequence}`,
      };
      if (extra.onStoreError !== undefined) options.onStoreError = extra.onStoreError;
      // The suite counts requests exactly; on a loaded machine a Redis reply can come after the
      // 250 ms default deadline, and the fallback's answer would then fail a test about headers.
      if (options.store.remote === true) options.timeoutMs = 10_000;
      return createLimiter(options);
    },
    async start(options, listen) {
      const app = await harness.start(options, listen);
      open.push(app);
      return app;
    },
  };
}
