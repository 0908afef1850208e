import { MemoryStore } from '@floodgate/memory';
import type { StoreFactory } from './harness.js';

// Fixed windows are aligned to the epoch. On the real clock, a test whose requests straddle a
// window's end (every minute, for `window: '1m'`) sees the later ones counted in a new window, and
// fails once in a few hundred runs. This clock runs at real speed but reads the start of an hour
// when a test file loads it, so every window that divides an hour (1 s, 10 s, 1 min, 1 h) opens
// at that instant: a 1 min window ends a full minute into the file's run, never sooner.
const shift = Date.now() % 3_600_000;

/** Real time, shifted so that the test file loaded at the start of an hour. */
export const steadyClock = (): number => Date.now() - shift;

/** A MemoryStore on `steadyClock`: for tests on real time that expect one window. */
export function steadyMemoryStore(): MemoryStore {
  return new MemoryStore({ now: steadyClock });
}

export const memoryStores: StoreFactory = {
  name: 'MemoryStore',
  make: (now) => new MemoryStore({ now: now ?? steadyClock }),
};
