import { type BreakerOptions, FloodgateError, isFloodgateError } from '@floodgate/core';
import { afterIo } from '@floodgate/core/internal';
import { Breaker, type PolicyResult, type Store, type StoreCall } from '@floodgate/core/store';
import { HealthBoard, type ShardHealthEvent } from './health.js';
import type { Shard } from './shards.js';

const MAX_TIMER = 2_147_483_647;

/** The ms left until `deadline`; none past 2^31 - 1 ms (a timer fires at once: as good as none). */
function leftOf(deadline: number | undefined): number | undefined {
  if (deadline === undefined) return undefined;
  const left = deadline - performance.now();
  return left > MAX_TIMER ? undefined : left;
}

export interface GuardOptions {
  breaker: boolean | BreakerOptions;
  onHealthChange: ((event: ShardHealthEvent) => void) | undefined;
}

/**
 * Every call to a shard goes through here: its breaker, its health record and its deadline.
 * A deadline that expires is the shard's failure, counted when it expires (not when, or if, the
 * shard answers later): a stalled shard (SIGSTOP, a full socket buffer, a partition without a
 * reset) then opens its breaker after `failures` timeouts instead of keeping every decision
 * waiting for as long as it stays stalled. It expires only once the replies that came meanwhile
 * were read: the guard rejects before the limiter's timer decides, so it must not take a busy
 * process for a silent shard (a reply that came in time, charged on the shard, was a timeout on
 * its record, the caller's error, and a few busy moments later opened its breaker).
 */
export class ShardGuard {
  readonly health: HealthBoard;
  readonly #shards: readonly Shard[];
  readonly #breakers: readonly (Breaker | undefined)[];

  constructor(shards: readonly Shard[], options: GuardOptions) {
    this.#shards = shards;
    this.health = new HealthBoard(shards, options.onHealthChange);
    const b = options.breaker;
    // Checked even when no shard is remote: a typo must not wait for the day one is.
    if (typeof b === 'object') new Breaker(b);
    this.#breakers = shards.map((shard, i) => {
      if (b === false || shard.store.remote !== true) return undefined;
      const given = b === true ? {} : b;
      this.health.circuit(i, 'closed');
      return new Breaker({
        ...given,
        onStateChange: (state, error) => {
          this.health.circuit(i, state);
          given.onStateChange?.(state, error);
        },
      });
    });
  }

  /** Whether the shard's breaker is open now (no call is sent to it). */
  isOpen(index: number): boolean {
    return this.#breakers[index]?.state === 'open';
  }

  /**
   * `task` on shard `index`, given up at `deadline` (a `performance.now()` instant) when there
   * is one. Rejects with a `STORE_*` error naming the shard, or with the task's own caller error.
   */
  run<T>(index: number, task: (store: Store) => Promise<T>, deadline?: number): Promise<T> {
    return this.#start(index, deadline, undefined, task);
  }

  /**
   * `run` of the shard's `evaluate(call)`, a decision's path, without a task closure per call (a
   * burst makes thousands in one loop); given up later than `deadline` when the shard's store
   * holds the call back while it is busy and says its caller waits longer (`Store.waitUntil`,
   * read only for a call that asks: `extendable`).
   */
  evaluate(index: number, call: StoreCall, deadline?: number): Promise<readonly PolicyResult[]> {
    return this.#start(index, deadline, call, undefined);
  }

  /** `task`, or without one the shard's `evaluate(extend)`, unless refused; then watched. */
  #start<T>(
    index: number,
    deadline: number | undefined,
    extend: StoreCall | undefined,
    task: ((store: Store) => Promise<T>) | undefined,
  ): Promise<T> {
    const left = leftOf(deadline);
    const refused = this.#refuse(index, left);
    if (refused !== undefined) return Promise.reject(refused);
    const store = this.#shards[index]!.store;
    let pending: Promise<T>;
    try {
      // Without a task, `evaluate` made the call and T is its results.
      pending =
        task === undefined
          ? (store.evaluate(extend!) as Promise<unknown> as Promise<T>)
          : task(store);
    } catch (cause) {
      pending = Promise.reject(cause);
    }
    return this.#watch(index, pending, left === undefined ? undefined : deadline, left, extend);
  }

  /** Why shard `index` gets no call now, if it does not: no time left, or its breaker open. */
  #refuse(index: number, left: number | undefined): FloodgateError | undefined {
    const shard = this.#shards[index]!;
    if (left !== undefined && left <= 0) {
      // Spent before this shard was asked (the other owner of a migration took it all): not
      // this shard's failure, and it must not get a call it would charge after the caller left.
      return new FloodgateError('STORE_TIMEOUT', `shard "${shard.name}": no time left to call it`);
    }
    const breaker = this.#breakers[index];
    if (breaker !== undefined && !breaker.admit()) {
      return new FloodgateError(
        'STORE_UNAVAILABLE',
        `shard "${shard.name}": its circuit breaker is open, the shard was not called`,
      );
    }
    return undefined;
  }

  /** `pending` on shard `index`: its breaker, its health record, its deadline (`left` ms on). */
  #watch<T>(
    index: number,
    pending: Promise<T>,
    deadline: number | undefined,
    left: number | undefined,
    extend: StoreCall | undefined,
  ): Promise<T> {
    const shard = this.#shards[index]!;
    const breaker = this.#breakers[index];
    const store = shard.store;
    const asks = extend?.extendable === true && typeof store.waitUntil === 'function';
    return new Promise<T>((resolve, reject) => {
      let settled = false;
      // The deadline the timer is armed for; it moves only when the shard's store moves it.
      let armedFor = deadline;
      const began = performance.now();
      const expire = () => {
        if (settled) return;
        // Read after pending I/O too (the answers that came meanwhile move a busy shard's
        // deadline), as the limiter reads it. A deadline that did not move expires now, even a
        // ms early (a timer may fire so): the shard's failure is counted before the limiter
        // decides, as for a call that does not ask.
        // A deadline moved to less than a ms from now expires now too, as an unmoved one may:
        // a timer waits at least a ms, and the limiter, reading the same deadline once it has
        // passed, gives up at once (a fresh store's first call, made in a tick that ran a few
        // ms long, had its deadline moved by as much; re-armed for a ms, the guard came second).
        const later = asks ? store.waitUntil!(extend!) : undefined;
        const now = performance.now();
        if (later !== undefined && armedFor !== undefined && later > armedFor && later - now >= 1) {
          armedFor = later;
          // Rounded down: re-armed in the same check phase as the limiter's timer, just before
          // it, and for no longer, so this one still fires first (rounded up, the limiter's,
          // armed µs later, could round to a ms less and decide before the shard's failure).
          const more = Math.max(1, Math.floor(later - now));
          timer = setTimeout(() => afterIo(expire), Math.min(MAX_TIMER, more));
          return;
        }
        settled = true;
        // What it waited in all: its deadline, or the later one its store moved it to.
        const error = new FloodgateError(
          'STORE_TIMEOUT',
          `shard "${shard.name}" did not answer within ${Math.ceil(armedFor! - began)} ms`,
        );
        breaker?.failure(error);
        this.health.failed(index, error);
        reject(error);
      };
      // Armed before the limiter's timer, for no longer: its check phase comes first, so the
      // shard's failure is counted (and its breaker may open) before the limiter decides.
      let timer = left === undefined ? undefined : setTimeout(() => afterIo(expire), left);
      pending.then(
        (result) => {
          // A late answer after the deadline was counted as a failure: it changes nothing.
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          breaker?.success();
          this.health.succeeded(index);
          resolve(result);
        },
        (cause: unknown) => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          // A mistake in the call (a bad `now()`, say) is not the shard's failure.
          if (isFloodgateError(cause) && !cause.code.startsWith('STORE_')) {
            breaker?.release();
            reject(cause);
            return;
          }
          const code = isFloodgateError(cause) ? cause.code : 'STORE_UNAVAILABLE';
          const message = cause instanceof Error ? cause.message : String(cause);
          const error = new FloodgateError(code, `shard "${shard.name}": ${message}`, { cause });
          breaker?.failure(error);
          this.health.failed(index, error);
          reject(error);
        },
      );
    });
  }
}
