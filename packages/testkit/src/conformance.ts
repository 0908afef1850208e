import type { Store } from '@floodgate/core/store';
import { registerBlockFor } from './conformance/blockfor.js';
import { registerCharging } from './conformance/charging.js';
import { registerConcurrency } from './conformance/concurrency.js';
import { registerControls } from './conformance/controls.js';
import { registerCosts } from './conformance/costs.js';
import { registerDifferential } from './conformance/differential.js';
import { makeHarness } from './conformance/harness.js';
import { registerIdentities } from './conformance/identities.js';
import { registerOverrides } from './conformance/overrides.js';
import { registerQuota } from './conformance/quota.js';
import { registerRefund } from './conformance/refund.js';
import { registerLateSettles, registerReservations } from './conformance/reservations.js';
import { registerRetry } from './conformance/retry.js';
import { registerSemantics } from './conformance/semantics.js';
import { registerServerClock } from './conformance/server-clock.js';
import { registerShadowComposition } from './conformance/shadow-composition.js';
import type { ConformanceOptions, TestApi } from './conformance/types.js';
import { registerValidation } from './conformance/validation.js';

/**
 * The one conformance suite every Floodgate store runs: registers, under one `describe`, the
 * tests that prove the store decides exactly as the reference in `@floodgate/core` does.
 * @example
 * A store package's whole conformance test file:
 * ```ts
 * import { MemoryStore } from '@floodgate/memory';
 * import { storeConformance } from '@floodgate/testkit';
 * import { describe, expect, it } from 'vitest';
 *
 * storeConformance({ describe, it, expect }, { name: 'MemoryStore', makeStore: ({ now }) => new MemoryStore({ now }) });
 * ```
 * @public
 */
export function storeConformance<S extends Store>(
  api: TestApi,
  options: ConformanceOptions<S>,
): void {
  if (typeof options?.makeStore !== 'function') {
    throw new TypeError('storeConformance: options.makeStore is required');
  }
  if (options.teardown !== undefined && typeof api.afterAll !== 'function') {
    throw new TypeError('storeConformance: options.teardown needs api.afterAll');
  }
  const k = options.semanticsScale;
  if (k !== undefined) {
    // Windows of 1 s × k must divide a day, or the table's times would cross other seams.
    if (!Number.isInteger(k) || k < 1 || 86_400 % k !== 0) {
      throw new TypeError('storeConformance: options.semanticsScale must divide 86400');
    }
    // Only stores whose keys expire on real time need it: elsewhere it would only change the run.
    if (options.realTimeExpiry !== true) {
      throw new TypeError('storeConformance: options.semanticsScale needs realTimeExpiry');
    }
  }
  const h = makeHarness(api, options as ConformanceOptions<S>);
  api.describe(`${options.name}: Floodgate store conformance`, () => {
    if (options.teardown !== undefined) api.afterAll!(options.teardown);
    registerValidation(h);
    registerCharging(h);
    registerIdentities(h);
    registerBlockFor(h);
    registerRefund(h);
    registerReservations(h);
    if (options.concurrency !== false) registerConcurrency(h);
    if (options.overrides !== false) registerOverrides(h);
    registerControls(h);
    registerShadowComposition(h);
    registerQuota(h);
    if (h.controlsTime) {
      registerSemantics(h);
      registerRetry(h);
      registerDifferential(h);
      registerCosts(h);
      registerLateSettles(h);
    } else {
      registerServerClock(h);
    }
  });
}
