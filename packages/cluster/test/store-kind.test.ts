// The `floodgate.store` attribute is each store's `kind`, on the published bundles: there a
// class is named `_MemoryStore` or `_ShardedStore` (the bundler renames a class that refers to
// itself), so a name read off the constructor would change with a build. Imports from dist.
import { createLimiter, fixedWindow } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';
import type { Telemetry, TelemetryTarget } from '@floodgate/core/telemetry';
import { IoRedisStore } from '@floodgate/ioredis';
import { MemoryStore } from '@floodgate/memory';
import { NodeRedisStore } from '@floodgate/node-redis';
import { Redis } from 'ioredis';
import { createClient } from 'redis';
import { describe, expect, it } from 'vitest';
import { ShardedStore } from '../dist/index.js';

/** The `store` a limiter over `store` hands its telemetry (the attribute's value). */
function attributeOf(store: Store): string {
  let target: TelemetryTarget | undefined;
  const telemetry: Telemetry = {
    bind: (t) => {
      target = t;
      return { decided() {}, storeDuration() {}, breakerChanged() {} };
    },
  };
  createLimiter({ store, policy: fixedWindow({ limit: 1, window: '1s' }), telemetry });
  return target!.store;
}

describe('floodgate.store on the built packages', () => {
  it('names each store by its kind, never by a bundler-mangled class name', () => {
    // Clients that never connect: the stores are only built.
    const ioredis = new Redis({ lazyConnect: true, port: 1 });
    const nodeRedis = createClient({ url: 'redis://127.0.0.1:1' });
    const memory = new MemoryStore();
    expect(memory.constructor.name).toMatch(/MemoryStore/); // `_MemoryStore` in dist today
    expect(attributeOf(memory)).toBe('memory');
    expect(attributeOf(new IoRedisStore(ioredis))).toBe('ioredis');
    expect(attributeOf(new NodeRedisStore(nodeRedis as never))).toBe('node-redis');
    const sharded = new ShardedStore([new MemoryStore(), new MemoryStore()]);
    expect(attributeOf(sharded)).toBe('sharded');
    ioredis.disconnect();
  });

  it('a store without a kind is `custom`, whatever its class is called', () => {
    class MyStore implements Store {
      async evaluate() {
        return [{ allowed: true, remaining: 0, resetAfterMs: 0, retryAfterMs: 0, delayMs: 0 }];
      }
      async reset() {}
    }
    expect(attributeOf(new MyStore())).toBe('custom');
    const mine = new MyStore();
    const dynamo: Store = { kind: 'dynamo', evaluate: mine.evaluate, reset: mine.reset };
    expect(attributeOf(dynamo)).toBe('dynamo');
  });
});
