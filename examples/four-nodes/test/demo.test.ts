import { execFileSync } from 'node:child_process';
import { describe, expect, test } from 'vitest';
// @ts-expect-error -- plain .mjs without declarations; the demo has no build step on purpose.
import { fourNodes, LIMIT, REQUESTS, seams } from '../src/scenarios.mjs';
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
      // Falling back in-process here would hide a broken Redis path behind a passing test.
      // The note says why, so it is part of what a failure prints.
      if (process.env.REDIS_URL || hasRedisServer()) {
        expect({ kind: shared.kind, note: shared.note }).toEqual({
          kind: 'redis',
          note: undefined,
        });
      }
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
});
