// Per-identity overrides across processes (registered by redisMultiprocessTests): an override set,
// replaced or cleared by one app-server process is what every other one decides with at its next
// decision, and a burst dealt over all of them admits exactly the override's limit. The worker
// side (serveOverrides) runs in each forked process (worker.ts).
import { createLimiter, fixedWindow, type LimiterWithOverrides } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import type { RedisSuiteApi } from './types.js';

/** What the parent asks a worker about overrides (worker.ts hands these to `serveOverrides`). */
export type OverrideRequest =
  | { type: 'ovr-set'; id: number; key: string; limit: number; until: number }
  | { type: 'ovr-clear'; id: number; key: string }
  | { type: 'ovr-limit'; id: number; key: string };

/** A worker's answer: the decision's figures, or nothing for a write. */
export interface OverrideReply {
  id: number;
  allowed?: boolean;
  limit?: number;
  retryAfterMs?: number;
  until?: number;
  error?: string;
}

/**
 * The worker's side: a limiter with overrides (fixedWindow, 3 a day) on the worker's own store.
 * Without the blocked-key cache: the store's semantics are under test here, the cache's bound
 * across processes is the change feed's (docs/changing-limits.md).
 */
export function serveOverrides(
  store: Store,
  send: (reply: OverrideReply) => void,
): (m: { type: string }) => boolean {
  let limiter: LimiterWithOverrides | undefined;
  const get = () =>
    (limiter ??= createLimiter({
      store,
      policy: fixedWindow({ limit: 3, window: '1d' }),
      prefix: 'mp-ovr',
      onStoreError: 'throw',
      timeoutMs: 10_000, // exact counts, not timeouts: generous on a loaded machine
      blockCache: false,
      overrides: true,
    }));
  return (message) => {
    const m = message as OverrideRequest;
    const failed = (e: Error) => send({ id: m.id, error: String(e?.cause ?? e) });
    if (m.type === 'ovr-set') {
      get()
        .override(m.key, { limit: m.limit, until: m.until })
        .then(() => send({ id: m.id }), failed);
    } else if (m.type === 'ovr-clear') {
      get()
        .overrides.clear(m.key)
        .then(() => send({ id: m.id }), failed);
    } else if (m.type === 'ovr-limit') {
      get()
        .limit(m.key)
        .then(
          (d) =>
            send({
              id: m.id,
              allowed: d.allowed,
              limit: d.limit,
              retryAfterMs: d.retryAfterMs,
              ...(d.override === undefined ? {} : { until: d.override.until }),
            }),
          failed,
        );
    } else {
      return false;
    }
    return true;
  };
}

/** The parent's side: `send(n, message)` sends to worker n and resolves with its reply. */
export function registerOverrideProcesses(
  api: Pick<RedisSuiteApi, 'it' | 'expect'>,
  nodes: number,
  send: (worker: number, message: object) => Promise<unknown>,
): void {
  const { it, expect } = api;
  const HOUR = 3_600_000;
  // The worker's replies to these requests are OverrideReply (serveOverrides).
  const ask = async (worker: number, message: object) =>
    (await send(worker, message)) as OverrideReply;
  const decide = async (worker: number, key: string) => {
    const r = await ask(worker, { type: 'ovr-limit', key });
    expect(r.error).toBeUndefined();
    return r;
  };

  it('overrides: one process sets, raises, blocks and clears; every other decides with it next', async () => {
    const key = 'ovr-two';
    for (let i = 0; i < 3; i++) expect((await decide(0, key)).allowed).toBe(true);
    expect((await decide(1, key)).allowed, 'at 3 a day').toBe(false);
    const until = Date.now() + HOUR;
    expect((await ask(1, { type: 'ovr-set', key, limit: 5, until })).error).toBeUndefined();
    const raised = await decide(0, key);
    expect([raised.allowed, raised.limit, raised.until], 'the other process, at once').toEqual([
      true,
      5,
      until,
    ]);
    expect((await decide(1, key)).allowed, 'the fifth').toBe(true);
    expect((await decide(0, key)).allowed, 'five in all').toBe(false);
    const end = Date.now() + HOUR;
    await ask(0, { type: 'ovr-set', key, limit: 0, until: end });
    const blocked = await decide(1, key);
    expect(blocked.allowed, 'blocked by the other process').toBe(false);
    // Until the block ends at the earliest (later when the day's 5 of 3 used still deny then).
    expect(blocked.retryAfterMs).toBeGreaterThan(HOUR - 60_000);
    await ask(1, { type: 'ovr-clear', key });
    const cleared = await decide(0, key);
    expect([cleared.allowed, cleared.limit, cleared.until], 'cleared: 3 a day').toEqual([
      false,
      3,
      undefined,
    ]);
  });

  it(`overrides: a burst dealt over ${nodes} processes admits exactly the override's limit`, async () => {
    const key = 'ovr-burst';
    await ask(nodes - 1, { type: 'ovr-set', key, limit: 40, until: Date.now() + HOUR });
    const replies = await Promise.all(
      Array.from({ length: 120 }, (_, i) => decide(i % nodes, key)),
    );
    expect(replies.filter((r) => r.allowed)).toHaveLength(40);
    expect(new Set(replies.map((r) => r.limit))).toEqual(new Set([40]));
  });
}
