import { FloodgateError } from '@floodgate/core';
import type { Store } from '@floodgate/core/store';

/**
 * A shard with a stable name and, optionally, a weight.
 * @example
 * Named shards: removing `eu-2` later moves only the identities it held.
 * ```ts
 * import { ShardedStore, type ShardSpec } from '@floodgate/cluster';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const shards: ShardSpec[] = [
 *   { name: 'eu-1', store: new IoRedisStore(new Redis('redis://10.0.0.1:6379')) },
 *   { name: 'eu-2', store: new IoRedisStore(new Redis('redis://10.0.0.2:6379')), weight: 2 },
 * ];
 * const store = new ShardedStore(shards);
 * ```
 * @public
 */
export interface ShardSpec {
  /** Any Floodgate store: an `IoRedisStore` or `NodeRedisStore` on one node, a `MemoryStore`… */
  store: Store;
  /**
   * What the hashing knows the shard by. Identities follow names, not positions: name your
   * shards when you may remove one from the middle of the list or reorder them.
   * @default its index in the list, as a string ('0', '1', …)
   */
  name?: string;
  /**
   * Its share of identities relative to the others (weighted rendezvous hashing): a shard of
   * weight 2 gets about twice the identities of a shard of weight 1. A positive finite number.
   * @default 1
   */
  weight?: number;
}

export interface Shard {
  readonly store: Store;
  readonly name: string;
  readonly weight: number;
}

export function isStore(value: unknown): value is Store {
  const s = value as Partial<Store> | null;
  return (
    typeof s === 'object' &&
    s !== null &&
    typeof s.evaluate === 'function' &&
    typeof s.reset === 'function'
  );
}

/** One entry of a shard list, `where` naming the list in errors ('shard 2', 'migration.from[2]'). */
function toShard(entry: unknown, i: number, where: string): Shard {
  if (isStore(entry)) return { store: entry, name: String(i), weight: 1 };
  const spec = entry as Partial<ShardSpec> | null;
  if (typeof spec !== 'object' || spec === null || !isStore(spec.store)) {
    throw new FloodgateError('INVALID_OPTION', `${where} is neither a store nor { store }`);
  }
  for (const key of Object.keys(spec)) {
    if (key !== 'store' && key !== 'name' && key !== 'weight') {
      throw new FloodgateError('INVALID_OPTION', `${where}: unknown field "${key}"`);
    }
  }
  const name = spec.name ?? String(i);
  if (typeof name !== 'string' || name.length === 0) {
    throw new FloodgateError('INVALID_OPTION', `${where}: name must be a non-empty string`);
  }
  const weight = spec.weight ?? 1;
  if (typeof weight !== 'number' || !Number.isFinite(weight) || weight <= 0) {
    throw new FloodgateError('INVALID_OPTION', `${where}: weight must be a positive number`);
  }
  return { store: spec.store, name, weight };
}

function unique(shards: readonly Shard[], what: string): void {
  if (new Set(shards.map((s) => s.name)).size !== shards.length) {
    throw new FloodgateError('INVALID_OPTION', `${what}: shard names must be unique`);
  }
}

export function toShards(stores: unknown): Shard[] {
  if (!Array.isArray(stores) || stores.length === 0) {
    throw new FloodgateError('INVALID_OPTION', 'ShardedStore needs a non-empty array of stores');
  }
  const shards = stores.map((entry: unknown, i) => toShard(entry, i, `shard ${i}`));
  unique(shards, 'ShardedStore');
  return shards;
}

/**
 * The old list of a migration. A name stands for the current shard of that name (same store,
 * same weight); a store or `{ store }` of a current name must be that shard's store, since one
 * shard is one breaker and one health record. Entries with names not in the current list are
 * the shards being retired.
 */
export function toOldShards(from: unknown, current: readonly Shard[]): Shard[] {
  if (!Array.isArray(from) || from.length === 0) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'ShardedStore: migration.from must be the non-empty list of the shards before the change',
    );
  }
  const shards = from.map((entry: unknown, i): Shard => {
    const where = `migration.from[${i}]`;
    if (typeof entry === 'string') {
      const same = current.find((s) => s.name === entry);
      if (same === undefined) {
        throw new FloodgateError(
          'INVALID_OPTION',
          `${where}: "${entry}" is not a current shard's name; give a shard being removed as { name, store }`,
        );
      }
      return same;
    }
    const shard = toShard(entry, i, where);
    const same = current.find((s) => s.name === shard.name);
    if (same !== undefined && same.store !== shard.store) {
      throw new FloodgateError(
        'INVALID_OPTION',
        `${where}: shard "${shard.name}" is also in the current list with another store object; pass its name or the same store`,
      );
    }
    return shard;
  });
  unique(shards, 'ShardedStore: migration.from');
  return shards;
}
