// The Node side of the bridge (fixtures/bridge-worker.ts): a Store whose every method is one
// POST to the bridge Worker, where a real DurableObjectStore makes the call on real Durable
// Objects. It carries arguments and results, and the error's code back; it decides nothing.
import { FloodgateError, type FloodgateErrorCode } from '@floodgate/core';
import type {
  LeaseGrant,
  LeaseRef,
  LeaseRequest,
  LeaseStore,
  OverrideStore,
  PolicyResult,
  PolicyState,
  Store,
  StoreCall,
} from '@floodgate/core/store';

export interface BridgeOptions {
  /** The bridge Worker's URL. */
  readonly url: URL;
  /** The suite's clock: the store then runs with `clock: 'client'`. */
  readonly now?: () => number;
  readonly shards?: number;
}

interface Reply {
  readonly ok?: unknown;
  readonly error?: { code?: FloodgateErrorCode; message: string; cause: string };
}

/** The call as JSON can carry it: `keys` is a getter on the limiter's call. */
function plainCall(call: StoreCall): Record<string, unknown> {
  const out: Record<string, unknown> = {
    keys: call.keys,
    policies: call.policies,
    cost: call.cost,
    mode: call.mode,
  };
  if (call.overrides === true) out.overrides = true;
  if (call.migrate !== undefined) out.migrate = call.migrate;
  if (call.costs !== undefined) out.costs = call.costs;
  if (call.identity !== undefined) out.identity = call.identity;
  if (call.prefix !== undefined) out.prefix = call.prefix;
  return out;
}

export class BridgeStore implements Store, LeaseStore, OverrideStore {
  readonly kind = 'durable-objects';
  readonly remote = true;
  readonly now?: () => number;
  readonly #options: BridgeOptions;

  constructor(options: BridgeOptions) {
    this.#options = options;
    if (options.now !== undefined) this.now = options.now;
  }

  async #post(method: string, args: unknown[], deadline?: number): Promise<unknown> {
    const o = this.#options;
    const body = {
      method,
      args,
      now: o.now?.(),
      shards: o.shards,
      budgetMs: deadline === undefined ? undefined : deadline - performance.now(),
    };
    const res = await fetch(o.url, { method: 'POST', body: JSON.stringify(body) });
    const reply = (await res.json()) as Reply;
    if (reply.error !== undefined) {
      const e = reply.error;
      if (e.code !== undefined) throw new FloodgateError(e.code, `${e.message} (${e.cause})`);
      throw new Error(e.message);
    }
    return reply.ok;
  }

  async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    return (await this.#post('evaluate', [plainCall(call)], call.deadline)) as PolicyResult[];
  }

  async reset(keys: readonly string[]): Promise<void> {
    await this.#post('reset', [keys]);
  }

  async acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    const { deadline, ...rest } = request;
    return (await this.#post('acquireLease', [rest], deadline)) as LeaseGrant;
  }

  async releaseLease(lease: LeaseRef): Promise<boolean> {
    return (await this.#post('releaseLease', [lease])) as boolean;
  }

  async extendLease(lease: LeaseRef, leaseMs: number): Promise<boolean> {
    return (await this.#post('extendLease', [lease, leaseMs])) as boolean;
  }

  async writeOverrides(
    keys: readonly string[],
    states: readonly (PolicyState | null)[],
  ): Promise<void> {
    await this.#post('writeOverrides', [keys, states]);
  }

  async readOverrides(keys: readonly string[]): Promise<readonly (PolicyState | undefined)[]> {
    const states = (await this.#post('readOverrides', [keys])) as (PolicyState | null)[];
    return states.map((s) => s ?? undefined);
  }

  /** A decision of a limiter made in the Worker on this store, on its defaults (bridge-worker.ts). */
  async limitHere(
    limit: number,
    identity: string,
  ): Promise<{ allowed: boolean; remaining: number; reason: string | null; errors: string[] }> {
    return (await this.#post('limit', [limit, identity])) as never;
  }

  /** The key's TTL as the store reports it (`DurableObjectStore.ttl`). */
  async ttl(key: string): Promise<number | undefined> {
    return ((await this.#post('ttl', [key])) as number | null) ?? undefined;
  }
}
