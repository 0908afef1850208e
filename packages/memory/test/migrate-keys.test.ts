// `migrateKeys: '0.1'` on MemoryStore: an in-process store has no 0.1 keys to read (no 0.1
// process shares its memory), so it decides as without the option; the option is accepted so one
// configuration serves every store, and a reset still clears the identity.
import { createLimiter, fixedWindow, slidingWindowLog, tokenBucket } from '@floodgate/core';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

describe('migrateKeys on MemoryStore', () => {
  it('decides as without the option, and resets', async () => {
    let now = 1_000_000;
    for (const policy of [
      fixedWindow({ limit: 3, window: '1s', blockFor: '10s' }),
      tokenBucket({ limit: 3, interval: '1s' }),
      slidingWindowLog({ limit: 3, window: '1s' }),
    ]) {
      const a = createLimiter({ store: new MemoryStore({ now: () => now }), policy });
      const b = createLimiter({
        store: new MemoryStore({ now: () => now }),
        policy,
        migrateKeys: '0.1',
      });
      for (let i = 0; i < 20; i++) {
        now += 97;
        const [x, y] = await Promise.all([a.limit('u'), b.limit('u')]);
        expect(y).toEqual(x);
      }
      await b.reset('u');
      expect((await b.limit('u')).allowed).toBe(true);
    }
  });
});
