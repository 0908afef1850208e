import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script, shared with the docs plot.
import { densest, runHerd } from '../scripts/herd.mjs';
import { withRetry } from '../src/index.js';

const CLIENTS = 200;

interface Herd {
  arrivals: number[];
  waits: number[];
}

describe('the herd: 200 clients told "retry after 2 s" in the same instant', () => {
  it('with the default jitter they come back spread: no 100 ms slice gets a quarter', async () => {
    const { arrivals, waits }: Herd = await runHerd({ withRetry, clients: CLIENTS });
    expect(arrivals).toHaveLength(CLIENTS);
    // Nobody comes back before the server said it could (1 ms: timers run on a ms clock).
    expect(arrivals[0]).toBeGreaterThanOrEqual(2000);
    expect(waits[0]).toBeGreaterThanOrEqual(1999);
    // At the server, in sliding windows, so no choice of slice edges can hide a cluster.
    expect(densest(arrivals, 100)).toBeLessThanOrEqual(CLIENTS / 4);
    // The spread is the jitter range (1 s by default), not an accident of load.
    expect(densest(waits, 200)).toBeLessThan(CLIENTS / 2);
    expect((waits.at(-1) as number) - (waits[0] as number)).toBeGreaterThan(600);
  });

  it("with jitter 'none' they come back together", async () => {
    const { arrivals, waits }: Herd = await runHerd({
      withRetry,
      clients: CLIENTS,
      options: { jitter: 'none' },
    });
    expect(arrivals).toHaveLength(CLIENTS);
    expect(arrivals[0]).toBeGreaterThanOrEqual(2000);
    expect(waits[0]).toBeGreaterThanOrEqual(1999);
    // Every client sends its retry 2 s after its 429: one wave. (At the server the wave is
    // widened by the CPU this one process needs for 200 requests; docs/client.md shows both.)
    expect(densest(waits, 200)).toBeGreaterThanOrEqual(CLIENTS * 0.9);
  });
});
