// The conformance suite in the store's real runtime: Deno, on `Deno.openKv` (Deno's built-in
// KV, not the npm client). vitest does not run in Deno, so the suite is bundled with a minimal
// runner (deno/mini-test.ts) and run as a Deno program; this test asserts its summary.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeConformance } from '@floodgate/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { DenoKvStore } from '../src/index.js';
import { miniTest, type Summary } from './deno/mini-test.js';
import { bundle, DENO, denoRun, runToEnd } from './support/deno.js';

const dir = mkdtempSync(join(tmpdir(), 'floodgate-deno-kv-deno-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** How many tests the suite registers for the runner's options (the same, but for the KV). */
function registered(): number {
  const counter = miniTest();
  const unused = {} as never;
  storeConformance(counter.api, {
    name: 'count',
    makeStore: () => new DenoKvStore(unused),
    inspect: { ttl: () => undefined, keys: () => [] },
    teardown: () => {},
  });
  return counter.registered;
}

describe('DenoKvStore in Deno', () => {
  it('passes the whole conformance suite on Deno.openKv', { timeout: 300_000 }, async () => {
    const file = join(dir, 'conformance.mjs');
    await bundle(new URL('./deno/conformance-runner.ts', import.meta.url).pathname, file);
    const exit = await denoRun(file, dir, [join(dir, 'kv.sqlite')], 290_000);
    const last = exit.stdout.trim().split('\n').at(-1) ?? '';
    let summary: Summary | undefined;
    try {
      summary = JSON.parse(last) as Summary;
    } catch {
      summary = undefined;
    }
    expect(summary, `no summary from deno; stderr:\n${exit.stderr}`).toBeDefined();
    expect(summary!.failures, exit.stderr).toEqual([]);
    // Every test the suite registers with these options (counted here, without running them).
    expect(summary!.passed).toBe(registered());
    expect(summary!.passed).toBeGreaterThan(100);
    expect(exit.code).toBe(0);
  });

  it('takes the KV Deno gives, as Deno types it: `deno check`', { timeout: 120_000 }, async () => {
    const file = new URL('../test-deno/kv-fits.ts', import.meta.url).pathname;
    const exit = await runToEnd(
      DENO,
      ['check', '--no-config', '--no-lock', '--unstable-kv', file],
      dir,
      110_000,
    );
    expect(exit.code, exit.stderr).toBe(0);
  });
});
