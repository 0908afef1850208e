import { FloodgateError } from '@floodgate/core';
import { describe, expect, it } from 'vitest';
import { MemoryStore } from '../src/index.js';

describe('MemoryStore options', () => {
  it('an unknown option is refused with INVALID_OPTION naming the store and the option', () => {
    const run = () => new MemoryStore({ maxKeys: 10, maxkeys: 5 } as never);
    expect(run).toThrow(FloodgateError);
    expect(run).toThrow(
      expect.objectContaining({
        code: 'INVALID_OPTION',
        message: 'MemoryStore: unknown option "maxkeys"',
      }),
    );
  });

  it('every declared option is taken', () => {
    const store = new MemoryStore({ maxKeys: 10, now: () => 1_000 });
    expect(store).toBeInstanceOf(MemoryStore);
  });
});
