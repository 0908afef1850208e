import { storeConformance } from '@floodgate/testkit';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

storeConformance(
  { describe, it, expect },
  { name: 'MemoryStore', makeStore: ({ now }) => new MemoryStore({ now }) },
);
