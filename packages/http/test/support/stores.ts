import { MemoryStore } from '@floodgate/memory';
import type { StoreFactory } from './harness.js';

// Fixed windows are aligned to the epoch. On the real clock, a test whose requests straddle a
// window's end (every minute, for `window: '1m'`) sees the later ones counted in a new window, and
// fails once in a few hundred runs. This clock runs at real speed from the start of an hour at the
// moment a test file loads it, so for a minute no window of 1 s to 1 h that divides an hour ends
// before the next whole second, ten seconds or minute of the file's own run.
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
