// The Durable Object class, as a mixin over the runtime's `DurableObject` base: RPC reaches only
// classes that extend that base, and it can only be imported from `cloudflare:workers`, a module
// Node and bundlers outside Workers cannot load. Taking the base from the Worker keeps this
// package importable anywhere (its Node tests, its type checks) with no `cloudflare:*` import.
import { FloodgateError } from '@floodgate/core';
import { checkOptions, type OptionNames } from '@floodgate/core/internal';
import type { LeaseGrant, PolicyResult, PolicyState } from '@floodgate/core/store';
import { Engine } from './engine.js';
import { type ObjectStorage, Rows } from './rows.js';
import type { DecideRequest, LeaseCall } from './wire.js';

/** The parts of a Durable Object's `ctx` the object uses (Workers' `DurableObjectState`). */
interface ObjectContext {
  readonly storage: ObjectStorage;
  blockConcurrencyWhile<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * Options of `floodgateObject`.
 * @example
 * ```ts
 * import type { FloodgateObjectOptions } from '@floodgate/durable-objects';
 *
 * // Free an idle identity's storage within 10 s of its last state expiring.
 * const options: FloodgateObjectOptions = { sweepIntervalMs: 10_000 };
 * ```
 * @public
 */
export interface FloodgateObjectOptions {
  /**
   * The least time between two sweeps of an object (its alarm), which delete the state that
   * expired and, once none is left, the object's whole storage. Only storage depends on it: an
   * expired row is never read as live. Each sweep is an alarm invocation, billed as a request.
   * @default 60_000
   */
  sweepIntervalMs?: number;
}

/** What a class made by `floodgateObject` serves over RPC (`FloodgateRpc`, wire.ts). */
interface FloodgateObjectMethods extends FloodgateDurableObject {
  decide(request: DecideRequest): PolicyResult[] | null;
  reset(keys: readonly string[]): void;
  lease(step: LeaseCall): LeaseGrant | null;
  writeOverrides(
    keys: readonly string[],
    states: readonly (PolicyState | null)[],
    now?: number,
  ): void;
  readOverrides(keys: readonly string[], now?: number): (PolicyState | undefined)[];
  ttl(key: string, now?: number): number | undefined;
}

/**
 * An object of a class made by `floodgateObject`. Its other methods are the store's protocol,
 * called by `DurableObjectStore` over RPC and not part of the API.
 * @example
 * ```ts
 * import type { FloodgateDurableObject } from '@floodgate/durable-objects';
 *
 * declare const object: FloodgateDurableObject;
 * await object.alarm(); // what the runtime calls at the object's alarm time
 * ```
 * @public
 */
export interface FloodgateDurableObject {
  /**
   * The Durable Object alarm handler: deletes the state whose time has come, and once none is
   * left, the object's whole storage. A class made by `floodgateObject` must not replace it.
   */
  alarm(): Promise<void>;
}

/**
 * A constructor the object can extend: the runtime's `DurableObject`. `M` is what its instances
 * are.
 * @example
 * ```ts
 * import type { DurableObjectBase } from '@floodgate/durable-objects';
 *
 * declare const DurableObject: DurableObjectBase;
 * ```
 * @public
 */
// biome-ignore lint/suspicious/noExplicitAny: a mixin's base must take `...args: any[]` (TS2545, TS2510)
export type DurableObjectBase<M = object> = abstract new (...args: any[]) => M;

/**
 * The class `floodgateObject` returns: the base's, with the store's methods.
 * @example
 * ```ts
 * import type { DurableObjectBase, FloodgateObjectClass } from '@floodgate/durable-objects';
 *
 * declare const made: FloodgateObjectClass<DurableObjectBase>;
 * ```
 * @public
 */
export type FloodgateObjectClass<B extends DurableObjectBase> = B &
  DurableObjectBase<FloodgateDurableObject>;

const OPTION_NAMES = {
  sweepIntervalMs: true,
} as const satisfies OptionNames<FloodgateObjectOptions>;

// The engine of each object, beside it rather than in a private field: a class returned from a
// function cannot declare private members in its emitted type (TS4094).
const engines = new WeakMap<object, { engine: Engine; rows: Rows }>();

function parts(self: object): { engine: Engine; rows: Rows } {
  const p = engines.get(self);
  if (p === undefined) throw new Error('floodgateObject: the object was not constructed');
  return p;
}

/**
 * Makes the Durable Object class that holds Floodgate's state: pass the runtime's
 * `DurableObject` and export the result from your Worker under the class name your Wrangler
 * configuration binds. The class must be SQLite-backed (`new_sqlite_classes` in its migration).
 * Each identity's state lives in one object (or one shard: `DurableObjectStore`'s `shards`), and
 * each call runs there to completion without yielding, so decisions are exact however many
 * isolates call it.
 * @example
 * ```ts
 * import { type DurableObjectBase, floodgateObject } from '@floodgate/durable-objects';
 *
 * // In a Worker: import { DurableObject } from 'cloudflare:workers';
 * declare const DurableObject: DurableObjectBase;
 * export class FloodgateObject extends floodgateObject(DurableObject) {}
 * ```
 * @public
 */
export function floodgateObject<B extends DurableObjectBase>(
  Base: B,
  options: FloodgateObjectOptions = {},
): FloodgateObjectClass<B> {
  checkOptions('floodgateObject', options, OPTION_NAMES);
  const sweepMs = options.sweepIntervalMs ?? 60_000;
  if (!Number.isSafeInteger(sweepMs) || sweepMs <= 0) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'floodgateObject: sweepIntervalMs must be a positive integer',
    );
  }
  abstract class Floodgate extends Base implements FloodgateObjectMethods {
    // biome-ignore lint/suspicious/noExplicitAny: a mixin's constructor takes `...args: any[]` (TS2545)
    constructor(...args: any[]) {
      super(...args);
      const ctx = args[0] as ObjectContext;
      const rows = new Rows(ctx.storage, sweepMs);
      engines.set(this, { engine: new Engine(rows), rows });
      // Nothing else runs on the object until its alarm time is known.
      void ctx.blockConcurrencyWhile(() => rows.start());
    }

    decide(request: DecideRequest): PolicyResult[] | null {
      return parts(this).engine.decide(request);
    }

    reset(keys: readonly string[]): void {
      parts(this).engine.reset(keys);
    }

    lease(step: LeaseCall): LeaseGrant | null {
      return parts(this).engine.lease(step);
    }

    writeOverrides(
      keys: readonly string[],
      states: readonly (PolicyState | null)[],
      now?: number,
    ): void {
      parts(this).engine.writeOverrides(keys, states, now);
    }

    readOverrides(keys: readonly string[], now?: number): (PolicyState | undefined)[] {
      return parts(this).engine.readOverrides(keys, now);
    }

    ttl(key: string, now?: number): number | undefined {
      return parts(this).engine.ttl(key, now);
    }

    alarm(): Promise<void> {
      return parts(this).rows.sweep();
    }
  }
  return Floodgate;
}
