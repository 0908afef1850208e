// The part of a Deno KV connection the store uses, typed by shape: `Deno.openKv()` in Deno (and
// on Deno Deploy) and `openKv()` from `@deno/kv` in Node both fit it, and the store imports
// neither (no `Deno` global in its types, no npm dependency on the client).

/**
 * A Deno KV key as the store writes it: string parts only (its root, then one Floodgate key).
 * @example
 * ```ts
 * import type { DenoKvKey } from '@floodgate/deno-kv';
 *
 * const key: DenoKvKey = ['floodgate', 'api:{user_42}:tb:1m'];
 * ```
 * @public
 */
export type DenoKvKey = readonly string[];

/**
 * One entry `getMany` answers: `versionstamp` is null when the key holds nothing.
 * @example
 * ```ts
 * import type { DenoKvEntry } from '@floodgate/deno-kv';
 *
 * const absent: DenoKvEntry = { key: ['floodgate', 'k'], value: null, versionstamp: null };
 * ```
 * @public
 */
export interface DenoKvEntry {
  readonly key: readonly unknown[];
  readonly value: unknown;
  readonly versionstamp: string | null;
}

/**
 * A Deno KV atomic operation (`kv.atomic()`): checks, then writes, committed all or nothing.
 * @example
 * Check-and-set: write only if the key still has the versionstamp it was read with.
 * ```ts
 * import type { DenoKvLike } from '@floodgate/deno-kv';
 *
 * declare const kv: DenoKvLike;
 * const [entry] = await kv.getMany([['app', 'counter']]);
 * const result = await kv
 *   .atomic()
 *   .check({ key: ['app', 'counter'], versionstamp: entry!.versionstamp })
 *   .set(['app', 'counter'], new Uint8Array([1]), { expireIn: 60_000 })
 *   .commit();
 * if (!result.ok) console.log('someone else wrote it first');
 * ```
 * @public
 */
export interface DenoKvAtomic {
  check(...checks: { key: DenoKvKey; versionstamp: string | null }[]): DenoKvAtomic;
  set(key: DenoKvKey, value: unknown, options?: { expireIn?: number }): DenoKvAtomic;
  delete(key: DenoKvKey): DenoKvAtomic;
  commit(): Promise<{ readonly ok: boolean }>;
}

/**
 * What `DenoKvStore` needs of a Deno KV connection: strongly consistent `getMany` and `atomic`.
 * `await Deno.openKv(path?)` (Deno, Deno Deploy) and `await openKv(path)` from `@deno/kv` (Node)
 * both are one.
 * @example
 * ```ts
 * import { DenoKvStore, type DenoKvLike } from '@floodgate/deno-kv';
 *
 * declare const openKv: (path: string) => Promise<DenoKvLike>; // Deno.openKv, or @deno/kv's
 * const store = new DenoKvStore(await openKv('./limits.sqlite'));
 * ```
 * @public
 */
export interface DenoKvLike {
  getMany(keys: readonly DenoKvKey[]): Promise<readonly DenoKvEntry[]>;
  atomic(): DenoKvAtomic;
}
