import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script, shared with the docs plot.
import { densest, runHerd, spread80 } from '../scripts/herd.mjs';
import { withRetry } from '../src/index.js';

const CLIENTS = 200;

interface Herd {
  arrivals: number[];
  waits: number[];
  planned: number[];
  late: number[];
  firstWaveMs: number;
  retryWaveMs: number;
}

describe('the herd: 200 clients told "retry after 2 s" in the same instant', () => {
  it('with the default jitter they come back spread: no 100 ms slice gets a quarter', async () => {
    const { arrivals, waits, planned, late }: Herd = await runHerd({ withRetry, clients: CLIENTS });
    expect(arrivals).toHaveLength(CLIENTS);
    // Nobody comes back before the server said it could (1 ms: timers run on a ms clock).
    expect(planned[0]).toBeGreaterThanOrEqual(2000);
    expect(planned.at(-1)).toBeLessThanOrEqual(3000);
    expect(arrivals[0]).toBeGreaterThanOrEqual(2000);
    expect(waits[0]).toBeGreaterThanOrEqual(1999);
    // The plan, in sliding windows, so no choice of slice edges can hide a cluster.
    expect(densest(planned, 100)).toBeLessThanOrEqual(CLIENTS / 4);
    // At the server too, except that a stalled process fires its overdue timers together: a
    // client that sent more than 50 ms after its plan may land in any slice, so each such client
    // is allowed on top (on an idle machine there are none).
    const stalled = late.filter((ms) => ms > 50).length;
    expect(densest(arrivals, 100)).toBeLessThanOrEqual(CLIENTS / 4 + stalled);
    // The spread is the jitter range (1 s; uniform gives ~800 ms for the middle 80 %, and a
    // median 500 ms after the 2 s).
    expect(spread80(waits)).toBeGreaterThan(600);
    expect(waits[CLIENTS / 2]).toBeGreaterThan(2300);
  });

  it("with jitter 'none' they come back together", async () => {
    const { arrivals, waits, planned, firstWaveMs }: Herd = await runHerd({
      withRetry,
      clients: CLIENTS,
      options: { jitter: 'none' },
    });
    expect(arrivals).toHaveLength(CLIENTS);
    // Every client plans the very same 2 s...
    expect(new Set(planned)).toEqual(new Set([2000]));
    expect(arrivals[0]).toBeGreaterThanOrEqual(2000);
    expect(waits[0]).toBeGreaterThanOrEqual(1999);
    // ...and sends its retry then, late only by the CPU this one process needs to send 200
    // requests (the first wave, 200 calls in one synchronous loop, measures that on this
    // machine, now). With jitter the median client would wait 500 ms more.
    const lateness = (waits[CLIENTS / 2] as number) - 2000;
    expect(lateness).toBeLessThan(Math.max(250, firstWaveMs + 100));
  });
});
