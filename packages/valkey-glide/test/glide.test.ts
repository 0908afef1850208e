// What only GlideStore has: it takes the promise GlideClient.createClient returns.
import { createLimiter, FloodgateError, fixedWindow } from '@floodgate/core';
import { expectStoreUnavailable, startRedisServer, useRedisServer } from '@floodgate/testkit/redis';
import { GlideClient } from '@valkey/valkey-glide';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GlideStore } from '../src/index.js';
import './adapters.js'; // quiets GLIDE's logger

const server = useRedisServer({ beforeAll, afterAll });
const connect = (port: number) =>
  GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port }], requestTimeout: 10_000 });

describe('GlideStore given the promise of a client', () => {
  it('decides once the client is up, one limit across two stores', async () => {
    const pending = connect(server().port);
    const policy = fixedWindow({ limit: 3, window: '1h' });
    const a = createLimiter({ store: new GlideStore(pending), policy, onStoreError: 'throw' });
    const b = createLimiter({ store: new GlideStore(pending), policy, onStoreError: 'throw' });
    try {
      const ds = await Promise.all([a, b, a, b].map((l) => l.limit('p')));
      expect(ds.map((d) => d.allowed).sort()).toEqual([false, true, true, true]);
    } finally {
      (await pending).close();
    }
  });

  it('a client that never connects: STORE_UNAVAILABLE, and the limiter falls back', async () => {
    const dead = await startRedisServer();
    const port = dead.port;
    await dead.stop();
    const failed = connect(port);
    failed.catch(() => {});
    await expectStoreUnavailable(expect, new GlideStore(failed), 'never');
  });

  it('refuses what is neither a client nor a promise, before any call', () => {
    for (const bad of [undefined, null, 42, {}, { customCommand: 1 }]) {
      expect(() => new GlideStore(bad as never)).toThrow(FloodgateError);
    }
  });
});
