// Real Deno KV databases for the Node tests (`@deno/kv`, the Deno KV SQLite engine as a native
// module), one temp file each, and a reference store to compare decisions with.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Kv, openKv } from '@deno/kv';
import { isFloodgateError } from '@floodgate/core';
import {
  evaluateAll,
  type OverrideStore,
  type PolicyState,
  type Store,
} from '@floodgate/core/store';
import { afterAll } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'floodgate-deno-kv-unit-'));
const opened: Kv[] = [];
let files = 0;
afterAll(() => {
  for (const kv of opened) {
    try {
      kv.close();
    } catch {
      // closed by its test already
    }
  }
  rmSync(dir, { recursive: true, force: true });
});

/** A fresh database in its own file, closed after the test file. */
export async function freshKv(): Promise<Kv> {
  const kv = await openKv(join(dir, `unit${++files}.sqlite`));
  opened.push(kv);
  return kv;
}

/** Every key under `root` in `kv`, as the Floodgate keys they hold. */
export async function keysUnder(kv: Kv, root: readonly string[] = ['floodgate']) {
  const out: string[] = [];
  for await (const e of kv.list({ prefix: [...root] })) out.push(String(e.key.at(-1)));
  return out.sort();
}

/** The code of the FloodgateError `fn` throws or rejects with (undefined for none). */
export async function codeOf(fn: () => unknown): Promise<string | undefined> {
  try {
    await fn();
  } catch (error) {
    return isFloodgateError(error) ? error.code : `not a FloodgateError: ${error}`;
  }
  return undefined;
}

/**
 * The reference: core's `evaluateAll` over a Map, on the given clock, overrides included (no
 * expiry: tests keep to times before any state or override ends).
 */
export function referenceStore(now: () => number): Store & OverrideStore {
  const states = new Map<string, PolicyState>();
  return {
    async writeOverrides(keys, values) {
      keys.forEach((k, i) => {
        const v = values[i];
        if (v === null || v === undefined) states.delete(k);
        else states.set(k, v);
      });
    },
    async readOverrides(keys) {
      return keys.map((k) => states.get(k));
    },
    async evaluate(call) {
      const { results, writes } = evaluateAll(
        call,
        call.keys.map((k) => states.get(k)),
        now(),
      );
      writes.forEach((w, i) => {
        if (w === null) states.delete(call.keys[i]!);
        else if (w !== undefined) states.set(call.keys[i]!, w.state);
      });
      return results;
    },
    async reset(keys) {
      for (const k of keys) states.delete(k);
    },
  };
}
