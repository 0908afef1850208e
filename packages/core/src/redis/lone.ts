// Calls that go one script run each (a cluster client, `batch: false`, strict mode, a batching
// store's call that goes alone), and the tick that made them running long.
//
// Clients differ in when they write a command: ioredis at once, node-redis on `setImmediate`,
// GLIDE a microtask later. A burst of thousands of decisions made in one loop takes hundreds of
// ms: a call made at its start reached Redis only after the loop on the clients that write
// later, its deadline spent, and its script refused to charge (the first 64 of a Cluster burst
// of 12 000). A call is still handed to the client at once (deferred, its write would queue
// behind whatever else this tick scheduled); at the tick's end, a call whose caller asks
// `waitUntil` (`budget`) and that spent a tenth of its budget in this tick (`lateBy`) has its
// timeoutMs from then, as the rule says (window.ts: from the moment it is sent), and the window
// is told, so its caller waits as long. Refused as late while its caller still waits, it is sent once more (`Again`).
import { FloodgateError } from '../errors.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import type { ScriptRunner } from './runner.js';

/** After the current synchronous stretch and its microtasks: Node's nextTick, else a microtask. */
export const defer: (fn: () => void) => void =
  typeof process === 'object' && typeof process?.nextTick === 'function'
    ? (fn) => process.nextTick(fn)
    : queueMicrotask;

/** A call handed over this tick: when its caller stops waiting, and its timeoutMs. */
interface Handed {
  readonly call: StoreCall;
  /** `performance.now()`. */
  readonly until: number;
  readonly budget: number;
}

/**
 * A call Redis refused as late (it charged nothing) with `refused` for its deadline (Redis's
 * clock), sent once more when its caller still waits, with its `budget` (the timeoutMs of a
 * caller that asks `waitUntil`) from then; undefined when not (`RedisStore`).
 */
export type Again = (
  call: StoreCall,
  now: number | undefined,
  refused: number,
  budget: number | undefined,
) => Promise<readonly PolicyResult[]> | undefined;

/**
 * Runs one-run calls. `onLate(call, until, at)`: at `at`, the end of the tick that made it, past
 * a tenth of its budget after it was made (`lateBy`), its caller's wait moved to `until`.
 */
export class LoneSender {
  readonly #runner: ScriptRunner;
  readonly #onLate: (call: StoreCall, until: number, at: number) => void;
  readonly #again: Again;
  #handed: Handed[] = [];

  constructor(
    runner: ScriptRunner,
    onLate: (call: StoreCall, until: number, at: number) => void,
    again: Again,
  ) {
    this.#runner = runner;
    this.#onLate = onLate;
    this.#again = again;
  }

  submit(
    call: StoreCall,
    now: number | undefined,
    deadline: number | undefined,
    until: number,
    budget: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    const run = this.#runner.one(call, now, deadline);
    // No deadline in Redis (timeoutMs: false, a peek): never refused as late.
    if (deadline === undefined) return run;
    if (budget !== undefined && this.#handed.push({ call, until, budget }) === 1) {
      defer(this.#check);
    }
    return run.catch((error: unknown) => {
      const again = isLate(error) ? this.#again(call, now, deadline, budget) : undefined;
      if (again === undefined) throw error;
      return again;
    });
  }

  readonly #check = (): void => {
    const handed = this.#handed;
    this.#handed = [];
    const at = performance.now();
    for (const h of handed) {
      if (at + h.budget > h.until + lateBy(h.budget)) this.#onLate(h.call, at + h.budget, at);
    }
  };
}

/**
 * How much of its budget a call must have spent in this process before its tick ended for its
 * deadline to move: a tenth, and at least a ms. A burst's loop takes hundreds of ms; a tick cut
 * by a few ms (a loaded machine preempting this process) leaves the call nearly all its time,
 * and a moved deadline is one more instant for every timer that reads it to agree on (the
 * `ShardedStore`'s guard and the limiter raced for a few-ms move on a loaded CI run).
 */
export function lateBy(budget: number): number {
  return Math.max(1, budget / 10);
}

/** The script's refusal of a call that reached it at or after its deadline (protocol.ts). */
export function isLate(error: unknown): boolean {
  return error instanceof FloodgateError && error.code === 'STORE_TIMEOUT';
}
