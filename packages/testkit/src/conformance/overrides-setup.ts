// What the override conformance tests share (overrides.ts, overrides-store.ts): a limiter with
// overrides on the test's store, behind a wrapper that counts its store calls.
import { createLimiter, type Policy } from '@floodgate/core';
import { isOverrideStore, type OverrideStore, type Store } from '@floodgate/core/store';
import type { Harness, Run } from './harness.js';

export const HOUR = 3_600_000;

/** Store calls of each kind a limiter made, through a transparent wrapper. */
export interface Counted {
  readonly spy: Store & OverrideStore;
  readonly calls: { evaluate: number; write: number; read: number; reset: number };
}

/** The test's store behind a counting wrapper that keeps its clock and its overrides. */
export function counted(store: Store): Counted {
  if (!isOverrideStore(store)) throw new TypeError('the store cannot hold overrides');
  const calls = { evaluate: 0, write: 0, read: 0, reset: 0 };
  const spy: Store & OverrideStore = {
    evaluate(call) {
      calls.evaluate++;
      return store.evaluate(call);
    },
    reset(keys) {
      calls.reset++;
      return store.reset(keys);
    },
    writeOverrides(keys, states) {
      calls.write++;
      return store.writeOverrides(keys, states);
    },
    readOverrides(keys) {
      calls.read++;
      return store.readOverrides(keys);
    },
  };
  if (store.now !== undefined) (spy as { now?: () => number }).now = () => store.now!();
  return { spy, calls };
}

/** A limiter with overrides on the test's store, and the clock `until` is measured on. */
export function setup(run: Run, policy: Policy | readonly Policy[], prefix = run.prefix) {
  const { spy, calls } = counted(run.store);
  const limiter = createLimiter({
    store: spy,
    policy,
    prefix,
    blockCache: false,
    onStoreError: 'throw',
    overrides: true,
  });
  const now = () => run.store.now?.() ?? Date.now();
  return { limiter, calls, now };
}

/**
 * `actual` within the slack a store on its own clock needs: `expected` is read before the store
 * decides (Redis `TIME` runs a few ms later), so a wait counted from then is at most that.
 */
export function nearOf(h: Harness) {
  const slack = h.controlsTime ? 0 : 5_000;
  return (actual: number, expected: number, what: string, more = 0) => {
    h.expect(actual, `${what} (at most)`).toBeLessThanOrEqual(expected);
    h.expect(actual, `${what} (at least)`).toBeGreaterThanOrEqual(expected - slack - more);
  };
}
