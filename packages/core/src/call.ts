import { callKeys } from './keys.js';
import { legacyPolicyId } from './policies/migrate.js';
import type { StoreCall } from './store-types.js';
import type { Policy } from './types.js';

/**
 * The limiter's store call. `keys` are built on first read: a Redis store needs them, an
 * in-process store keyed by (prefix, policy id, identity) never does, and skips building them.
 * On the in-process path the limiter refills one call per decision (`refill`) instead of
 * allocating one.
 */
export class LimiterCall implements StoreCall {
  // V8 forgets a hidden class once no object of it is alive, and throws away the optimized code
  // that checks it: when the last limiter went (tests, per-tenant limiters, a benchmark between
  // runs), the next one's hot path went back to the interpreter at the next full GC. This
  // instance lives as long as the module.
  // biome-ignore lint/correctness/noUnusedPrivateClassMembers: held, never read (see above)
  static readonly #alive = new LimiterCall(Object.freeze([]), '', '', 1, 'limit');

  #keys: string[] | undefined;
  /** Present only when the limiter has a `timeoutMs` (`'deadline' in call` says so). */
  declare readonly deadline?: number;
  /** Present (and true) only for a limiter with `overrides`: its calls read the override keys. */
  declare readonly overrides?: boolean;
  /** Present only for a limiter with `migrateKeys`: its calls read and write the 0.1 keys too. */
  declare readonly migrate?: '0.1';
  declare readonly costs?: readonly number[];
  /** Present (and true) only when the limiter reads the store's `waitUntil` (window.ts). */
  declare readonly extendable?: boolean;

  constructor(
    readonly policies: readonly Policy[],
    readonly prefix: string,
    /** The encoded identity. */
    public identity: string,
    public cost: number,
    public mode: StoreCall['mode'],
    deadline?: number,
    overrides?: boolean,
    migrate?: '0.1',
    costs?: readonly number[],
    extendable?: boolean,
  ) {
    if (deadline !== undefined) (this as { deadline?: number }).deadline = deadline;
    if (extendable === true && deadline !== undefined) {
      (this as { extendable?: boolean }).extendable = true;
    }
    if (overrides === true) (this as { overrides?: boolean }).overrides = true;
    if (migrate !== undefined) (this as { migrate?: '0.1' }).migrate = migrate;
    // Only per-policy costs set it: calls with one cost keep their hidden class.
    if (costs !== undefined) (this as { costs?: readonly number[] }).costs = costs;
  }

  /** The same call object for the next decision of its limiter (never one with a deadline). */
  refill(identity: string, cost: number, mode: StoreCall['mode']): this {
    this.identity = identity;
    this.cost = cost;
    this.mode = mode;
    this.#keys = undefined;
    return this;
  }

  get keys(): readonly string[] {
    if (this.#keys === undefined) {
      this.#keys = callKeys(
        this.prefix,
        this.identity,
        this.policies,
        this.overrides === true,
        this.migrate === undefined ? undefined : this.policies.map(legacyPolicyId),
      );
    }
    return this.#keys;
  }

  /** The same call without a deadline (for a fallback store, which has no late charge). */
  withoutDeadline(): LimiterCall {
    return new LimiterCall(
      this.policies,
      this.prefix,
      this.identity,
      this.cost,
      this.mode,
      undefined,
      this.overrides,
      this.migrate,
      this.costs,
    );
  }
}
