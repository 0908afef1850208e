// What crosses between `DurableObjectStore` (in the Worker) and the object (`floodgateObject`):
// plain data only, so Durable Object RPC carries it by structured clone. The limiter's own
// StoreCall is a class whose `keys` is a lazy getter, which a clone would drop: `wireCall` copies
// the fields `evaluateAll` reads. Not exported from the package: both ends ship in it, and an app
// never speaks this protocol itself.
import type { Policy } from '@floodgate/core';
import type { LeaseGrant, PolicyResult, PolicyState, StoreCall } from '@floodgate/core/store';

/** A `StoreCall` as it crosses to the object: the fields `evaluateAll` reads, as plain data. */
export interface WireCall {
  readonly keys: readonly string[];
  readonly policies: readonly Policy[];
  readonly cost: number;
  readonly mode: StoreCall['mode'];
  readonly overrides?: boolean;
  readonly migrate?: '0.1';
  readonly costs?: readonly number[];
}

/** One decision as the store asks the object for it. */
export interface DecideRequest {
  readonly call: WireCall;
  /** The caller's clock (`clock: 'client'`); absent: the object reads its own. */
  readonly now?: number;
  /** Epoch ms on the object's clock from which the caller no longer waits: nothing is written then. */
  readonly deadline?: number;
}

/** A lease step as the store asks the object for it (`LeaseStore`, one call per step). */
export interface LeaseCall {
  readonly op: 'acquire' | 'release' | 'extend';
  readonly key: string;
  readonly id: string;
  readonly cost: number;
  /** acquire: most slots held at once. */
  readonly limit?: number;
  /** acquire and extend: the lease's life from now. */
  readonly leaseMs?: number;
  readonly now?: number;
  /** acquire: as `DecideRequest.deadline`. */
  readonly deadline?: number;
}

/**
 * The methods the object serves over Durable Object RPC: what `DurableObjectStore` calls on a
 * stub. Each runs to completion without awaiting anything, so each is atomic on its object.
 * `null` from `decide` or `lease` says the call arrived at or after its deadline and changed
 * nothing.
 */
export interface FloodgateRpc {
  decide(request: DecideRequest): Promise<readonly PolicyResult[] | null>;
  reset(keys: readonly string[]): Promise<void>;
  lease(step: LeaseCall): Promise<LeaseGrant | null>;
  writeOverrides(
    keys: readonly string[],
    states: readonly (PolicyState | null)[],
    now?: number,
  ): Promise<void>;
  readOverrides(
    keys: readonly string[],
    now?: number,
  ): Promise<readonly (PolicyState | undefined)[]>;
  ttl(key: string, now?: number): Promise<number | undefined>;
}

/** The call's fields the object needs, as plain data. */
export function wireCall(call: StoreCall): WireCall {
  const wire: {
    keys: readonly string[];
    policies: readonly Policy[];
    cost: number;
    mode: StoreCall['mode'];
    overrides?: boolean;
    migrate?: '0.1';
    costs?: readonly number[];
  } = { keys: call.keys, policies: call.policies, cost: call.cost, mode: call.mode };
  if (call.overrides === true) wire.overrides = true;
  if (call.migrate !== undefined) wire.migrate = call.migrate;
  if (call.costs !== undefined) wire.costs = call.costs;
  return wire;
}
