import { fileURLToPath } from 'node:url';
import { isFloodgateError, tokenBucket } from '@floodgate/core';
import { blockKey, encodeIdentity, overrideKey, policyKey } from '@floodgate/core/store';
import { build } from 'esbuild';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DurableObjectStore, type FloodgateNamespace } from '../src/index.js';
import { headOf, objectName } from '../src/routing.js';
import { fixtureWorker, startWorkerd } from './helpers/workerd.js';

// The store's side that runs before any object is asked: options, clock, routing. The namespace
// is a real one (miniflare's binding, from Node).
let mf: Miniflare;
let ns: FloodgateNamespace;

beforeAll(async () => {
  ({ mf } = await startWorkerd([await fixtureWorker('test/fixtures/bridge-worker.ts')]));
  ns = (await mf.getDurableObjectNamespace('FLOODGATE')) as unknown as FloodgateNamespace;
}, 60_000);
afterAll(async () => {
  await mf?.dispose();
});

function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (error) {
    return isFloodgateError(error) ? error.code : String(error);
  }
  return undefined;
}

describe('DurableObjectStore options', () => {
  it('rejects what is not a namespace, and bad options, with INVALID_OPTION', () => {
    for (const bad of [undefined, null, {}, { idFromName: () => 1 }, 'FLOODGATE']) {
      expect(
        codeOf(() => new DurableObjectStore(bad as never)),
        String(bad),
      ).toBe('INVALID_OPTION');
    }
    const options: unknown[] = [
      null,
      5,
      { clock: 'server' },
      { clock: 'client', now: 5 },
      { shards: 0 },
      { shards: 1.5 },
      { shards: -2 },
      { shard: 4 },
    ];
    for (const o of options) {
      expect(
        codeOf(() => new DurableObjectStore(ns, o as never)),
        JSON.stringify(o),
      ).toBe('INVALID_OPTION');
    }
  });

  it('is a remote store; on the client clock it exposes that clock, and its fallback runs on it', async () => {
    const plain = new DurableObjectStore(ns);
    expect([plain.kind, plain.remote, plain.now]).toEqual(['durable-objects', true, undefined]);
    let t = 1_700_000_000_000;
    const client = new DurableObjectStore(ns, { clock: 'client', now: () => t, shards: 8 });
    expect(client.now?.()).toBe(t);
    const fallback = client.fallback();
    t += 5;
    expect([fallback.kind, fallback.now?.()]).toEqual(['memory', t]);
  });

  it('a client clock that is not integer ms fails the call before any object is asked', async () => {
    const store = new DurableObjectStore(ns, { clock: 'client', now: () => Number.NaN });
    const policy = tokenBucket({ limit: 1, interval: '1s' });
    const call = {
      keys: [policyKey('x', 'u', policy.id)],
      policies: [policy],
      cost: 1,
      mode: 'limit' as const,
    };
    await expect(store.evaluate(call)).rejects.toMatchObject({ code: 'INVALID_OPTION' });
  });
});

describe('routing', () => {
  const policy = tokenBucket({ limit: 10, interval: '1m', blockFor: '1m' });
  const keysOf = (prefix: string, identity: string) => {
    const key = policyKey(prefix, encodeIdentity(identity), policy.id);
    return [
      key,
      blockKey(key),
      overrideKey(key),
      `${prefix}:{${encodeIdentity(identity)}}:concurrency`,
    ];
  };

  it('every key of one identity goes to one object; identities and prefixes to their own', () => {
    for (const shards of [undefined, 1, 16]) {
      for (const id of ['u', 'a}b{c', '}', 'x'.repeat(400), '🙂:{}']) {
        const names = new Set(keysOf('api', id).map((k) => objectName(k, shards)));
        expect(names.size, `${id.slice(0, 8)}, shards ${shards}`).toBe(1);
      }
    }
    expect(objectName(keysOf('api', 'u')[0]!, undefined)).toBe('api:{u}');
    const heads = new Set(
      ['u', 'v', 'a}b', 'a%7Db'].flatMap((id) =>
        ['api', 'web'].map((p) => headOf(keysOf(p, id)[0]!)),
      ),
    );
    expect(heads.size, 'one object per (prefix, identity)').toBe(8);
  });

  it('shards spread identities over exactly that many objects, the count in the name', () => {
    const names = new Set<string>();
    for (let i = 0; i < 2000; i++) names.add(objectName(keysOf('api', `user_${i}`)[0]!, 16));
    expect(names.size).toBe(16);
    for (const n of names) expect(n).toMatch(/^floodgate-shard:(\d|1[0-5])\/16$/);
  });
});

describe('runtime entry point', () => {
  const entry = fileURLToPath(new URL('../src/index.ts', import.meta.url));
  const bundled = (conditions: string[]) =>
    build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      platform: 'neutral',
      mainFields: ['module', 'main'],
      conditions,
      write: false,
      metafile: true,
      logLevel: 'silent',
    });

  it("this package's code imports nothing from node:* nor cloudflare:*", async () => {
    const out = await bundled([]);
    const ours = Object.entries(out.metafile.inputs).filter(([file]) => file.startsWith('src/'));
    expect(ours.length).toBeGreaterThan(3);
    const imports = ours.flatMap(([, i]) => i.imports.map((x) => x.path));
    expect(imports.filter((p) => /^(node|cloudflare):/.test(p))).toEqual([]);
  });

  it('as a Worker bundles it (workerd, browser conditions), nothing reachable imports node:*', async () => {
    const out = await bundled(['workerd', 'worker', 'browser']);
    const imports = Object.values(out.metafile.inputs).flatMap((i) => i.imports.map((x) => x.path));
    expect(imports.filter((p) => p.startsWith('node:'))).toEqual([]);
  });
});
