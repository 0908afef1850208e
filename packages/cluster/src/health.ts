import type { FloodgateError } from '@floodgate/core';
import type { BreakerState } from '@floodgate/core/store';

/**
 * A shard's state. `'healthy'`: its last call succeeded (every shard starts so). `'failing'`:
 * its last call failed with a store error, or passed its deadline unanswered (counted when the
 * deadline expires; a late answer changes nothing). One failure makes it failing and one success
 * makes it healthy again: the limiter already decides every failed call by `onStoreError`, so there is no
 * traffic to divert and nothing to gain from a threshold; the state is there to be watched.
 * @example
 * ```ts
 * import type { ShardedStore, ShardState } from '@floodgate/cluster';
 *
 * declare const store: ShardedStore;
 * const states: ShardState[] = store.health().map((shard) => shard.state);
 * const degraded = states.includes('failing');
 * ```
 * @public
 */
export type ShardState = 'healthy' | 'failing';

/**
 * One shard in `ShardedStore.health()`.
 * @example
 * A readiness report: every shard that is failing, and since when.
 * ```ts
 * import type { ShardedStore, ShardHealth } from '@floodgate/cluster';
 *
 * declare const store: ShardedStore;
 * const failing: ShardHealth[] = store.health().filter((s) => s.state === 'failing');
 * for (const s of failing) {
 *   console.warn(`${s.name}: failing since ${new Date(s.since).toISOString()}`, s.lastError);
 * }
 * ```
 * @public
 */
export interface ShardHealth {
  readonly name: string;
  readonly index: number;
  readonly weight: number;
  readonly state: ShardState;
  /** `Date.now()` when the shard entered its current state (construction for a new shard). */
  readonly since: number;
  /** Failed calls in a row (0 when healthy). */
  readonly consecutiveFailures: number;
  /** Calls since construction that succeeded / failed on this shard. */
  readonly successes: number;
  readonly failures: number;
  /** The most recent failure, kept after the shard recovers. */
  readonly lastError: FloodgateError | undefined;
  /** The shard's circuit breaker, or undefined without one. `'open'`: calls are not sent. */
  readonly circuit: BreakerState | undefined;
}

/**
 * Passed to `onHealthChange` whenever a shard changes state.
 * @example
 * ```ts
 * import { ShardedStore, type ShardHealthEvent } from '@floodgate/cluster';
 * import type { Store } from '@floodgate/core/store';
 *
 * declare const shards: Store[];
 * function alert(event: ShardHealthEvent): void {
 *   console.warn(`shard ${event.name}: ${event.from} → ${event.to}`, event.error?.code);
 * }
 * const store = new ShardedStore(shards, { onHealthChange: alert });
 * ```
 * @public
 */
export interface ShardHealthEvent {
  readonly name: string;
  readonly index: number;
  readonly from: ShardState;
  readonly to: ShardState;
  /** The failure that made the shard failing; undefined on recovery. */
  readonly error: FloodgateError | undefined;
  /** `Date.now()` of the change. */
  readonly at: number;
}

/** Per-shard counters and the state machine; calls `notify` on every change of state. */
export class HealthBoard {
  readonly #entries: {
    name: string;
    weight: number;
    state: ShardState;
    since: number;
    run: number;
    ok: number;
    failed: number;
    last: FloodgateError | undefined;
    circuit: BreakerState | undefined;
  }[];
  readonly #notify: ((event: ShardHealthEvent) => void) | undefined;

  constructor(
    shards: readonly { name: string; weight: number }[],
    notify?: (event: ShardHealthEvent) => void,
  ) {
    const now = Date.now();
    this.#entries = shards.map((s) => ({
      name: s.name,
      weight: s.weight,
      state: 'healthy',
      since: now,
      run: 0,
      ok: 0,
      failed: 0,
      last: undefined,
      circuit: undefined,
    }));
    this.#notify = notify;
  }

  succeeded(index: number): void {
    const e = this.#entries[index]!;
    e.ok++;
    e.run = 0;
    if (e.state === 'failing') this.#change(index, 'healthy', undefined);
  }

  failed(index: number, error: FloodgateError): void {
    const e = this.#entries[index]!;
    e.failed++;
    e.run++;
    e.last = error;
    if (e.state === 'healthy') this.#change(index, 'failing', error);
  }

  circuit(index: number, state: BreakerState): void {
    this.#entries[index]!.circuit = state;
  }

  #change(index: number, to: ShardState, error: FloodgateError | undefined): void {
    const e = this.#entries[index]!;
    const from = e.state;
    e.state = to;
    e.since = Date.now();
    try {
      this.#notify?.({ name: e.name, index, from, to, error, at: e.since });
    } catch {
      // A throwing listener must not turn a decision into an error.
    }
  }

  snapshot(): ShardHealth[] {
    return this.#entries.map((e, index) => ({
      name: e.name,
      index,
      weight: e.weight,
      state: e.state,
      since: e.since,
      consecutiveFailures: e.run,
      successes: e.ok,
      failures: e.failed,
      lastError: e.last,
      circuit: e.circuit,
    }));
  }
}
