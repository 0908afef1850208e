import { MemoryStore } from '@floodgate/memory';
import type { StoreFactory } from './harness.js';

export const memoryStores: StoreFactory = {
  name: 'MemoryStore',
  make: (now) => new MemoryStore(now === undefined ? {} : { now }),
};
