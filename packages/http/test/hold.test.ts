import { describe, expect, test } from 'vitest';
import { queueDelay } from '../src/index.js';
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
