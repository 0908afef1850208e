import { getEventListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithRetry, withRetry } from '../src/index.js';
import { refuseFirst, startServer, type TestServer } from './server.js';

// Issue #14 item 4: with several signals (options.signal, init.signal, a Request's own), only
// one was listened to. Each case aborts one of them while the others are set and never abort.

let server: TestServer;
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

type Which = 'options' | 'init' | 'request';
const CASES: { abort: Which; also: Which[] }[] = [
  { abort: 'options', also: ['init'] },
  { abort: 'init', also: ['options'] },
  { abort: 'request', also: ['init'] },
  { abort: 'request', also: ['options'] },
  { abort: 'options', also: ['init', 'request'] },
  { abort: 'init', also: ['options', 'request'] },
];

/** Starts a call with one controller per signal in `set`; `abort` is called by the test. */
function start(set: Which[], onRetry?: () => void) {
  const controllers = Object.fromEntries(set.map((w) => [w, new AbortController()])) as Partial<
    Record<Which, AbortController>
  >;
  const url = `${server.url}/`;
  const input = controllers.request
    ? new Request(url, { signal: controllers.request.signal })
    : url;
  const call = fetchWithRetry(
    input,
    controllers.init ? { signal: controllers.init.signal } : undefined,
    { signal: controllers.options?.signal, maxDelayMs: 300_000, onRetry },
  );
  return { call, controllers };
}

/** The call's outcome, or 'still pending' if it has not settled 10 s after the abort. */
async function settle(call: Promise<Response>): Promise<unknown> {
  return Promise.race([call.catch((e: unknown) => e), delay(10_000, 'still pending')]);
}

describe('any of the signals cancels at once', () => {
  it.each(CASES)('$abort aborted while $also also set: during a 120 s wait', async (c) => {
    server.handle = refuseFirst({ 'Retry-After': '120' }, 1_000_000);
    const reason = new Error(`${c.abort} gave up`);
    let controllers: Partial<Record<Which, AbortController>> = {};
    const started = start([c.abort, ...c.also], () => controllers[c.abort]?.abort(reason));
    controllers = started.controllers;
    expect(await settle(started.call)).toBe(reason);
  });

  it.each(CASES)('$abort aborted while $also also set: during an attempt', async (c) => {
    let arrived: () => void = () => undefined;
    const arrival = new Promise<void>((resolve) => {
      arrived = resolve;
    });
    server.handle = () => arrived(); // never answers
    const reason = new Error(`${c.abort} gave up`);
    const { call, controllers } = start([c.abort, ...c.also]);
    await arrival;
    controllers[c.abort]?.abort(reason);
    expect(await settle(call)).toBe(reason);
  });

  it('a signal already aborted in any place rejects without a request', async () => {
    const before = server.requests.length;
    const reason = new Error('early');
    const api = withRetry(fetch, { signal: new AbortController().signal });
    const request = new Request(`${server.url}/`, { signal: AbortSignal.abort(reason) });
    await expect(api(request, { signal: new AbortController().signal })).rejects.toBe(reason);
    expect(server.requests.length).toBe(before);
  });
});

describe('without AbortSignal.any (Node < 20.3, older browsers)', () => {
  const any = AbortSignal.any;
  beforeAll(() => {
    (AbortSignal as { any?: unknown }).any = undefined;
  });
  afterAll(() => {
    AbortSignal.any = any;
  });

  it.each(CASES)('$abort aborted while $also also set: during a 120 s wait', async (c) => {
    server.handle = refuseFirst({ 'Retry-After': '120' }, 1_000_000);
    const reason = new Error(`${c.abort} gave up`);
    let controllers: Partial<Record<Which, AbortController>> = {};
    const started = start([c.abort, ...c.also], () => controllers[c.abort]?.abort(reason));
    controllers = started.controllers;
    expect(await settle(started.call)).toBe(reason);
    // The signals that did not abort are left without a listener of this call. (A Request
    // follows its creator's signal with a listener of its own: not ours, not counted.)
    for (const w of c.also.filter((x) => x !== 'request')) {
      expect(getEventListeners(controllers[w]?.signal as AbortSignal, 'abort')).toHaveLength(0);
    }
  });

  it('a long-lived options.signal collects no listener from calls that failed', async () => {
    server.handle = refuseFirst({ 'Retry-After': '120' }, 1_000_000);
    const shared = new AbortController();
    const api = withRetry(fetch, { signal: shared.signal, maxDelayMs: 1000 });
    for (let i = 0; i < 12; i++) {
      await expect(api(`${server.url}/`)).rejects.toMatchObject({ code: 'DELAY_TOO_LONG' });
    }
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('an abort after the call still reaches the returned body', async () => {
    server.handle = (_req, res) => {
      res.writeHead(200);
      res.write('first chunk');
    };
    const controller = new AbortController();
    const res = await fetchWithRetry(`${server.url}/`, undefined, { signal: controller.signal });
    const reading = res.text();
    controller.abort(new Error('enough'));
    await expect(reading).rejects.toThrow();
  });
});
