import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createLimiter, fixedWindow, type Policy, tokenBucket } from '@floodgate/core';
import type { Miniflare } from 'miniflare';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BridgeStore } from './helpers/bridge-store.js';
import { fixtureWorker, startWorkerd } from './helpers/workerd.js';

// State lives in the object's SQLite storage, not in its memory: an evicted object, or a whole
// restarted workerd, forgets nothing; and each row goes once its time has come (the alarm), the
// object's storage with the last one.
const dir = mkdtempSync(join(tmpdir(), 'floodgate-do-'));
let mf: Miniflare;
let url: URL;

async function start(): Promise<void> {
  const worker = await fixtureWorker('test/fixtures/bridge-worker.ts');
  ({ mf, url } = await startWorkerd([worker], { persist: dir, inspect: true }));
}

beforeAll(start, 60_000);
afterAll(async () => {
  await mf?.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const limiterOn = (policy: Policy, prefix: string, shards?: number) =>
  createLimiter({
    store: new BridgeStore({ url, ...(shards === undefined ? {} : { shards }) }),
    policy,
    prefix,
    blockCache: false,
    onStoreError: 'throw',
    // Other suites may share this machine: a slow answer is slow, not a failure.
    timeoutMs: false,
  });

/** The keys of the rows the object `name` holds, read from its SQLite storage directly. */
async function rows(name: string): Promise<string[] | 'no table'> {
  const storage = await mf.unsafeGetDurableObjectStorage('floodgate', 'FloodgateObject', { name });
  const tables = await storage.exec<{ name: string }>(
    "SELECT name FROM sqlite_master WHERE type = 'table'",
  );
  if (!tables.some((t) => t.name === 'floodgate_state')) return 'no table';
  try {
    const found = await storage.exec<{ k: string }>('SELECT k FROM floodgate_state ORDER BY k');
    return found.map((r) => r.k);
  } catch (error) {
    // The object's alarm can drop the table between the two reads (the storage goes with its
    // last row): that is the table gone, not a failure.
    if (String(error).includes('no such table')) return 'no table';
    throw error;
  }
}

async function eventually(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${what}: not within 10 s`);
}

describe('DurableObjectStore: state in the object storage', () => {
  it('an evicted object, and a restarted workerd, still hold the count', async () => {
    const policy = fixedWindow({ limit: 3, window: '1d' });
    const l = limiterOn(policy, 'keep');
    expect((await l.limit('u')).remaining).toBe(2);
    expect((await l.limit('u')).remaining).toBe(1);
    await mf.unsafeEvictDurableObject('floodgate', 'FloodgateObject', { name: 'keep:{u}' });
    expect((await l.limit('u')).remaining, 'after eviction').toBe(0);
    await mf.dispose();
    await start();
    const again = limiterOn(policy, 'keep');
    const d = await again.limit('u');
    expect(d.allowed, 'after a restart: the 4th of 3 is denied').toBe(false);
    expect(await rows('keep:{u}')).toEqual([`keep:{u}:${policy.id}`]);
  }, 60_000);

  it('the alarm deletes each row once expired, and the storage with the last one', async () => {
    const short = tokenBucket({ limit: 2, interval: '300ms' });
    const long = tokenBucket({ limit: 2, interval: '2s' });
    // One shard: both identities in one object, whose alarm must take one row and keep the other.
    const object = 'floodgate-shard:0/1';
    await limiterOn(short, 'gc', 1).limit('a');
    await limiterOn(long, 'gc', 1).limit('b');
    expect(await rows(object)).toEqual([`gc:{a}:${short.id}`, `gc:{b}:${long.id}`].sort());
    await eventually('the expired row deleted', async () => (await rows(object)).length === 1);
    expect(await rows(object), 'the live row kept').toEqual([`gc:{b}:${long.id}`]);
    // deleteAll: not an empty table, no table at all (an idle identity's object holds nothing).
    await eventually('the storage deleted', async () => (await rows(object)) === 'no table');
    // A new decision after the storage went starts from empty, with a fresh table.
    expect((await limiterOn(long, 'gc', 1).limit('b')).remaining).toBe(1);
  }, 60_000);

  it('calls that write nothing (peek, reset, an unknown identity) leave no storage behind', async () => {
    const l = limiterOn(fixedWindow({ limit: 3, window: '1h' }), 'ro');
    expect((await l.peek('nobody')).remaining).toBe(3);
    await l.reset('nobody');
    expect(await rows('ro:{nobody}')).toBe('no table');
  });
});
