import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
// @ts-expect-error -- plain .mjs without declarations; the demo has no build step on purpose.
import { aiBudgets } from '../src/ai-budgets.mjs';
// @ts-expect-error -- see above
import { changingLimits, STEP_REQUESTS } from '../src/changing-limits.mjs';
// @ts-expect-error -- see above
import { HOT_IN_FLIGHT, HOT_LIMIT, hotKey, SLICE_SIZE } from '../src/hot-key.mjs';
// @ts-expect-error -- see above
import { fourNodes, LIMIT, NODES, REQUESTS, seams } from '../src/scenarios.mjs';
// @ts-expect-error -- see above
import { openSharedStore } from '../src/shared-store.mjs';

// Each burst is spread over ~2 s of wall time on real sockets.
const BURST_TIMEOUT = 30_000;

function hasRedisServer(): boolean {
  try {
    execFileSync('redis-server', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

/**
 * When the demo would pick Redis (REDIS_URL set, or redis-server on PATH), the shared store is
 * Redis: falling back in-process would hide a broken Redis path behind a passing test. The note
 * says why, so it is part of what a failure prints.
 */
function expectRedisWhenAvailable(shared: { kind: string; note?: string }): void {
  if (process.env.REDIS_URL || hasRedisServer()) {
    expect({ kind: shared.kind, note: shared.note }).toEqual({ kind: 'redis', note: undefined });
  }
}

describe('four-nodes demo', () => {
  test('(1) four nodes counting alone let all 380 through', {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const run = await fourNodes();
    expect(run.admitted).toBe(REQUESTS);
    expect(run.ok).toBe(REQUESTS);
    for (const node of run.nodes) expect(node.admitted).toBe(REQUESTS / 4);
  });

  test('(2) four nodes sharing one in-process store admit one bucket', {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const shared = await openSharedStore({ prefer: 'memory' });
    try {
      const run = await fourNodes({ shared });
      expect(run.admitted).toBeGreaterThanOrEqual(LIMIT);
      expect(run.admitted).toBeLessThanOrEqual(run.bound);
      expect(run.ok).toBe(run.admitted);
    } finally {
      await shared.close();
    }
  });

  // Whatever `pnpm demo` would pick: Redis when REDIS_URL is set or redis-server is on PATH.
  test("(2) four nodes sharing the demo's store admit one bucket", {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const shared = await openSharedStore();
    try {
      expectRedisWhenAvailable(shared);
      const run = await fourNodes({ shared });
      expect(run.fallback).toBe(0);
      expect(run.admitted).toBeGreaterThanOrEqual(LIMIT);
      expect(run.admitted).toBeLessThanOrEqual(run.bound);
    } finally {
      await shared.close();
    }
  });

  test('(3) only fixedWindow admits 2x the limit at a seam', async () => {
    const { rows } = await seams();
    expect(rows.map((r: { kind: string }) => r.kind)).toEqual([
      'fixedWindow',
      'slidingWindow',
      'slidingWindowLog',
      'tokenBucket',
      'leakyBucket',
    ]);
    for (const r of rows as Array<{ kind: string; before: number; total: number }>) {
      expect(r.before).toBe(LIMIT);
      if (r.kind === 'fixedWindow') expect(r.total).toBe(2 * LIMIT);
      else expect(r.total).toBeLessThanOrEqual(LIMIT);
    }
  });

  interface HotRun {
    admitted: number;
    denied: number;
    decisions: number;
    errors: number;
    storeCalls: number;
    windows: number[];
  }

  /** Every caller calls until its first denial: the window's limit is used up, exactly. */
  function expectLimitUsedUp(run: HotRun): void {
    expect(run.errors).toBe(0);
    expect(run.admitted).toBe(HOT_LIMIT);
    expect(run.windows).toEqual([HOT_LIMIT]);
    expect(run.denied).toBe(NODES * HOT_IN_FLIGHT); // one each
    expect(run.decisions).toBe(HOT_LIMIT + NODES * HOT_IN_FLIGHT);
  }

  test('(4) one hot key on one in-process store: the limit, with a store call per decision or per slice', {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const shared = await openSharedStore({ prefer: 'memory' });
    try {
      const plain: HotRun = await hotKey({ shared, size: 0 });
      expectLimitUsedUp(plain);
      expect(plain.storeCalls).toBe(plain.decisions);
      const sliced: HotRun = await hotKey({ shared, size: SLICE_SIZE });
      expectLimitUsedUp(sliced);
      // A lease answers SLICE_SIZE + 1 decisions; a few more calls go to the store near the limit.
      expect(sliced.storeCalls * 10).toBeLessThan(sliced.decisions);
    } finally {
      await shared.close();
    }
  });

  test("(4) one hot key on the demo's store, each server with its own connection", {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const shared = await openSharedStore();
    try {
      expectRedisWhenAvailable(shared);
      const plain: HotRun = await hotKey({ shared, size: 0 });
      expectLimitUsedUp(plain);
      const sliced: HotRun = await hotKey({ shared, size: SLICE_SIZE });
      expectLimitUsedUp(sliced);
      expect(sliced.storeCalls * 10).toBeLessThan(sliced.decisions);
    } finally {
      await shared.close();
    }
  });

  interface Step {
    name: string;
    requests: number;
    admitted: number;
    denied: number;
    cached: number;
    fallback: number;
    ok: number;
    admittedByNode: number[];
    used: number;
  }
  interface LiveRun {
    until: number;
    stored: { limit: unknown; until: number } | undefined;
    cleared: unknown;
    heardMs: Array<number | undefined> | undefined;
    steps: Step[];
  }

  /**
   * free 10 → pro 100 mid-minute: 10 + 90, not 10 + 100. The abuser: 20 on pro, none of 40 while
   * blocked (nothing charged), 20 of 20 once cleared, on every server.
   */
  function expectLimitsChanged(run: LiveRun): void {
    expect(
      run.steps.map((s) => [s.name, s.requests, s.admitted, s.denied, s.used, s.fallback]),
    ).toEqual([
      ['free', STEP_REQUESTS.free, 10, STEP_REQUESTS.free - 10, 10, 0],
      ['upgraded', STEP_REQUESTS.upgraded, 90, STEP_REQUESTS.upgraded - 90, 100, 0],
      ['abuser', STEP_REQUESTS.abuser, STEP_REQUESTS.abuser, 0, STEP_REQUESTS.abuser, 0],
      ['blocked', STEP_REQUESTS.blocked, 0, STEP_REQUESTS.blocked, STEP_REQUESTS.abuser, 0],
      [
        'lifted',
        STEP_REQUESTS.lifted,
        STEP_REQUESTS.lifted,
        0,
        STEP_REQUESTS.abuser + STEP_REQUESTS.lifted,
        0,
      ],
    ]);
    for (const s of run.steps) expect(s.ok).toBe(s.admitted);
    // The 90 after the upgrade were admitted by all four servers: one count, wherever it lands.
    const upgraded = run.steps.find((s) => s.name === 'upgraded');
    for (const n of upgraded?.admittedByNode ?? []) expect(n).toBeGreaterThan(0);
    expect(run.stored).toEqual({ limit: 0, until: run.until });
    expect(run.cleared).toBeUndefined();
  }

  test('(5) plans and overrides on one in-process store', {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const shared = await openSharedStore({ prefer: 'memory' });
    try {
      const run: LiveRun = await changingLimits({ shared });
      expectLimitsChanged(run);
      expect(run.heardMs).toBeUndefined();
      for (const s of run.steps) expect(s.cached).toBe(0);
    } finally {
      await shared.close();
    }
  });

  test("(5) plans and overrides on the demo's store, the block set and cleared from a fifth connection", {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const shared = await openSharedStore();
    try {
      expectRedisWhenAvailable(shared);
      const run: LiveRun = await changingLimits({ shared });
      expectLimitsChanged(run);
      if (shared.kind === 'redis') {
        // Every server heard of the clear on the change feed (its blocked-key cache dropped the
        // abuser's denial), and none served a cached 429 after it.
        expect(run.heardMs).toHaveLength(NODES);
        for (const ms of run.heardMs ?? []) expect(ms).toBeLessThan(1000);
        expect(run.steps.find((s) => s.name === 'lifted')?.cached).toBe(0);
      }
    } finally {
      await shared.close();
    }
  });

  interface AiStep {
    name: string;
    sent: number;
    admitted: number;
    denied: number;
    deniedBy: string;
    fallback: number;
    ok: number;
    admittedByNode: number[];
    charged: number;
    used: number;
    left: number[];
    retryAfter: number | undefined;
  }

  /**
   * 60 requests and 10 000 tokens a minute per key. Charged at the estimate (1 000 each, 300
   * used): 10 calls. Reserved and settled: 31 (300 n + 1 000 <= 10 000), 9 300 charged. Small
   * calls: requests bind at 60. One call settled at 12 000: debt, the next 5 refused by tokens.
   */
  function expectAiBudgets(run: { steps: AiStep[] }): void {
    expect(
      run.steps.map((s) => [
        s.name,
        s.sent,
        s.admitted,
        s.denied,
        s.deniedBy,
        s.charged,
        s.used,
        s.left,
        s.fallback,
      ]),
    ).toEqual([
      ['estimate', 40, 10, 30, 'tokens', 10_000, 3000, [50, 0], 0],
      ['settle', 40, 31, 9, 'tokens', 9300, 9300, [29, 700], 0],
      ['small', 80, 60, 20, 'requests', 2400, 2400, [0, 7600], 0],
      ['debt', 6, 1, 5, 'tokens', 12_000, 12_000, [59, 0], 0],
    ]);
    for (const s of run.steps) expect(s.ok).toBe(s.admitted);
    // Round robin, one call at a time: the 31 settled calls were admitted by all four servers.
    expect(run.steps[1]?.admittedByNode).toEqual([8, 8, 8, 7]);
    // The debt lasts until the fixed window ends: a Retry-After within the minute.
    const debt = run.steps[3];
    expect(debt?.retryAfter).toBeGreaterThan(0);
    expect(debt?.retryAfter).toBeLessThanOrEqual(60);
  }

  test('(6) requests and tokens together on one in-process store', {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const shared = await openSharedStore({ prefer: 'memory' });
    try {
      expectAiBudgets(await aiBudgets({ shared }));
    } finally {
      await shared.close();
    }
  });

  test("(6) requests and tokens together on the demo's store, each server with its own connection", {
    timeout: BURST_TIMEOUT,
  }, async () => {
    const shared = await openSharedStore();
    try {
      expectRedisWhenAvailable(shared);
      expectAiBudgets(await aiBudgets({ shared }));
    } finally {
      await shared.close();
    }
  });
});
