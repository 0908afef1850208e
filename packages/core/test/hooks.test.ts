// Every hook the core calls (onDecision, onError, the breaker's onStateChange, the telemetry's
// three methods) may throw or hand back a promise that rejects: neither changes the decision nor
// reaches the process as an unhandled rejection (Node exits on one). Each is reported once.
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { tokenBucket } from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import type { Store } from '../src/store.js';
import type { LimiterTelemetry, Telemetry } from '../src/telemetry-types.js';
import { MapStore } from './map-store.js';

const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};
let consoleError: ReturnType<typeof vi.spyOn>;

beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
  consoleError = vi.spyOn(console, 'error').mockImplementation(() => {});
});

afterEach(() => {
  process.off('unhandledRejection', onUnhandled);
  vi.restoreAllMocks();
});

/** Lets rejections settle and Node's unhandled-rejection check run. */
const settle = () => new Promise((resolve) => setTimeout(resolve, 20));

/** The ways a hook fails: a throw, an async function that rejects, a foreign thenable. */
const FAILURES = {
  throws: () => {
    throw new Error('hook bug');
  },
  rejects: async () => {
    throw new Error('metrics backend down');
  },
  'rejecting thenable': () => ({
    // biome-ignore lint/suspicious/noThenProperty: a thenable that is not a Promise, on purpose
    then: (_ok: unknown, fail: (e: unknown) => void) => fail(new Error('thenable down')),
  }),
} as const;

/** A remote store that fails while `down` (so the breaker and the fallback come into play). */
function flaky(): { store: Store; down(v: boolean): void } {
  const inner = new MapStore();
  let down = false;
  return {
    store: {
      remote: true,
      evaluate: (c) => (down ? Promise.reject(new Error('down')) : inner.evaluate(c)),
      reset: (k) => inner.reset(k),
    },
    down: (v) => {
      down = v;
    },
  };
}

function expectReportedOnce(what: string): void {
  expect(unhandled).toEqual([]);
  expect(consoleError).toHaveBeenCalledTimes(1);
  expect(String(consoleError.mock.calls[0]![0])).toContain(what);
}

describe.each(Object.entries(FAILURES))('a hook that %s', (how, fail) => {
  const verb = how === 'throws' ? 'threw' : 'rejected';

  it('onDecision: the decisions stand, reported once', async () => {
    const limiter = createLimiter({
      store: new MapStore(),
      policy: tokenBucket({ limit: 2, interval: '1h' }),
      onDecision: fail as () => void,
    });
    const ds = [await limiter.limit('u'), await limiter.limit('u'), await limiter.limit('u')];
    expect(ds.map((d) => d.allowed)).toEqual([true, true, false]);
    await settle();
    expectReportedOnce(`onDecision ${verb}`);
  });

  it('onError: the fallback decides, reported once', async () => {
    const { store, down } = flaky();
    const limiter = createLimiter({
      store,
      policy: tokenBucket({ limit: 2, interval: '1h' }),
      onStoreError: 'allow',
      breaker: false,
      onError: fail as () => void,
    });
    down(true);
    const d = await limiter.limit('u');
    expect(d).toMatchObject({ allowed: true, reason: 'store-unavailable' });
    await limiter.limit('u');
    await settle();
    expectReportedOnce(`onError ${verb}`);
  });

  it('the breaker’s onStateChange: the decision falls back as it would without it', async () => {
    const { store, down } = flaky();
    const limiter = createLimiter({
      store,
      policy: tokenBucket({ limit: 2, interval: '1h' }),
      onStoreError: 'deny',
      breaker: { failures: 1, cooldownMs: 3_600_000, onStateChange: fail as () => void },
    });
    down(true);
    // The first failure opens the breaker, in the decision's own call.
    const d = await limiter.limit('u');
    expect(d).toMatchObject({ allowed: false, reason: 'store-unavailable' });
    await settle();
    expectReportedOnce(`breaker.onStateChange ${verb}`);
  });

  it('each telemetry method: the decisions stand, reported once', async () => {
    const calls: string[] = [];
    const tele: LimiterTelemetry = {
      decided: () => {
        calls.push('decided');
        return (fail as () => void)();
      },
      storeDuration: () => {
        calls.push('storeDuration');
        return (fail as () => void)();
      },
      breakerChanged: () => {
        calls.push('breakerChanged');
        return (fail as () => void)();
      },
    };
    const telemetry: Telemetry = { bind: () => tele };
    const { store, down } = flaky();
    const limiter = createLimiter({
      store,
      policy: tokenBucket({ limit: 2, interval: '1h' }),
      telemetry,
      onStoreError: 'deny',
      breaker: { failures: 1, cooldownMs: 3_600_000 },
    });
    expect((await limiter.limit('u')).allowed).toBe(true);
    down(true);
    expect(await limiter.limit('u')).toMatchObject({ allowed: false, reason: 'store-unavailable' });
    expect(new Set(calls)).toEqual(new Set(['decided', 'storeDuration', 'breakerChanged']));
    await settle();
    expectReportedOnce(`telemetry ${verb}`);
  });
});
