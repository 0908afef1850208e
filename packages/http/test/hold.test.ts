import { describe, expect, test } from 'vitest';
import { queueDelay } from '../src/adapter/index.js';
import { sleep } from './support/context.js';

describe('queueDelay', () => {
  test('a wait longer than a timer can hold (2^31 ms, ~25 days) is still pending, not run at once', async () => {
    const controller = new AbortController();
    const waited = queueDelay(2 ** 31 + 5_000, controller.signal);
    const first = await Promise.race([waited, sleep(300).then(() => 'pending' as const)]);
    expect(first).toBe('pending');
    controller.abort();
    expect(await waited).toBe(false);
  });

  test('a short wait resolves true; an abort resolves false', async () => {
    expect(await queueDelay(20)).toBe(true);
    const controller = new AbortController();
    const waited = queueDelay(60_000, controller.signal);
    controller.abort();
    expect(await waited).toBe(false);
  });
});

describe('maxQueued counts every middleware in the process', () => {
  test('a second middleware does not hold a request while the first holds maxQueued', async () => {
    const { leakyBucket } = await import('@floodgate/core');
    const { MemoryStore } = await import('@floodgate/memory');
    const { createEngine } = await import('../src/adapter/index.js');
    const make = () =>
      createEngine({
        policy: leakyBucket({ name: 'q', limit: 1, interval: '10s', queue: 5 }),
        store: new MemoryStore(),
        key: () => 'k',
        maxQueued: 1,
      });
    const [first, second] = [make(), make()];
    const view = {
      method: 'GET',
      path: '/',
      route: undefined,
      address: undefined,
      header: () => undefined,
      raw: {},
    };
    const controller = new AbortController();
    expect((await first.admit({ ...view, raw: {} }))?.action).toBe('next'); // its turn is now
    const held = first.admit({ ...view, raw: {} }, controller.signal); // held 10 s
    await sleep(50);
    expect((await second.admit({ ...view, raw: {} }))?.action).toBe('next'); // no wait: not held
    const refused = await second.admit({ ...view, raw: {} }, controller.signal);
    expect(refused).toMatchObject({ action: 'respond', status: 429 });
    controller.abort();
    expect(await held).toBeUndefined();
    // Released: the next delayed request is held again rather than refused.
    const again = new AbortController();
    const heldAgain = second.admit({ ...view, raw: {} }, again.signal);
    await sleep(50);
    again.abort();
    expect(await heldAgain).toBeUndefined();
  });
});
