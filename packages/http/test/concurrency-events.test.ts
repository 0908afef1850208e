// A concurrency limiter's onDecision behind concurrencyLimit (issue 30, item 11), on every adapter
// with a real server: each request's acquire, and its release with how long it held the slot;
// a denial; and a hook that throws or rejects changes no response.
import { createConcurrencyLimiter, type LeaseEvent } from '@floodgate/core/concurrency';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { ADAPTERS, type App, Gate, until } from './concurrency-apps.js';
import { steadyMemoryStore } from './support/stores.js';

const opened: App[] = [];
const gates: Gate[] = [];
afterEach(async () => {
  for (const gate of gates.splice(0)) gate.open();
  await Promise.all(opened.splice(0).map((a) => a.close()));
  vi.restoreAllMocks();
});

describe.each(Object.keys(ADAPTERS))('%s: concurrencyLimit events', (name) => {
  it('acquired, denied, released with its hold time; a failing hook changes nothing', async () => {
    const logged = vi.spyOn(console, 'error').mockImplementation(() => {});
    const events: LeaseEvent[] = [];
    const limiter = createConcurrencyLimiter({
      store: steadyMemoryStore(),
      limit: 1,
      leaseMs: '1m',
      onDecision: async (e) => {
        events.push(e);
        throw new Error('metrics backend down');
      },
    });
    const gate = new Gate();
    gates.push(gate);
    const app = await ADAPTERS[name]!({ limiter }, gate);
    opened.push(app);
    const slow = fetch(`${app.url}/slow`);
    await until('the slow handler running', () => gate.entered === 1);
    expect((await fetch(`${app.url}/fast`)).status).toBe(429);
    gate.open();
    expect((await slow).status).toBe(200);
    await until('the release reported', () => events.length === 3);
    expect(events.map((e) => [e.operation, e.outcome, e.identity])).toEqual([
      ['acquire', 'acquired', 'client'],
      ['acquire', 'denied', 'client'],
      ['release', 'released', 'client'],
    ]);
    expect(events[2]!.heldMs).toBeGreaterThan(0);
    expect((await fetch(`${app.url}/fast`)).status).toBe(200);
    await until('the rejections logged', () => logged.mock.calls.length > 0);
  });
});
