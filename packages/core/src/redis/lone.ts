// Calls that go one script run each (a cluster client, `batch: false`, strict mode), and the tick
// that made them running long.
//
// Clients differ in when they write a command: ioredis at once, node-redis on `setImmediate`,
// GLIDE a microtask later. A burst of thousands of decisions made in one loop takes hundreds of
// ms: a call made at its start reached Redis only after the loop on the clients that write
// later, its deadline spent, and its script refused to charge (the first 64 of a Cluster burst
// of 12 000). A call is still handed to the client at once (deferred, its write would queue
// behind whatever else this tick scheduled); at the tick's end, a call whose caller asks
// `waitUntil` (`budget`) and that was made past a ms before has its timeoutMs from then, as the
// rule says (window.ts: from the moment it is sent), the window is told, so its caller waits as
// long, and a refusal as late is sent once more with that deadline (refused, it charged nothing).
import { FloodgateError } from '../errors.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import type { ScriptRunner } from './runner.js';

/** After the current synchronous stretch and its microtasks: Node's nextTick, else a microtask. */
const defer: (fn: () => void) => void =
  typeof process === 'object' && typeof process?.nextTick === 'function'
    ? (fn) => process.nextTick(fn)
    : queueMicrotask;

/** A call handed over this tick: when its caller stops waiting, and its timeoutMs. */
interface Handed {
  readonly call: StoreCall;
  /** `performance.now()`; moved when the tick ran long. */
  until: number;
  readonly budget: number;
  /** Its deadline moved: a refusal as late is sent again. */
  moved: boolean;
}

/**
 * Runs one-run calls. `onLate(call, until, at)`: at `at`, the end of the tick that made it, past
 * a ms after it was made, its caller's wait moved to `until`.
 */
export class LoneSender {
  readonly #runner: ScriptRunner;
  readonly #onLate: (call: StoreCall, until: number, at: number) => void;
  #handed: Handed[] = [];

  constructor(runner: ScriptRunner, onLate: (call: StoreCall, until: number, at: number) => void) {
    this.#runner = runner;
    this.#onLate = onLate;
  }

  submit(
    call: StoreCall,
    now: number | undefined,
    deadline: number | undefined,
    until: number,
    budget: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    const run = this.#runner.one(call, now, deadline);
    if (budget === undefined || deadline === undefined) return run;
    const handed: Handed = { call, until, budget, moved: false };
    if (this.#handed.push(handed) === 1) defer(this.#check);
    return run.catch((error: unknown) => {
      // Refused as late because this process was busy past its deadline, while its caller
      // still waits: once more, with the deadline its caller now has.
      if (!handed.moved || !isLate(error) || performance.now() >= handed.until) throw error;
      handed.moved = false;
      return this.#runner.one(call, now, this.#runner.offset.toRedis(handed.until));
    });
  }

  readonly #check = (): void => {
    const handed = this.#handed;
    this.#handed = [];
    const at = performance.now();
    for (const h of handed) {
      // Past a ms only: on the hot path the tick is microseconds and nothing changes.
      if (at + h.budget <= h.until + 1) continue;
      h.until = at + h.budget;
      h.moved = true;
      this.#onLate(h.call, h.until, at);
    }
  };
}

/** The script's refusal of a call that reached it at or after its deadline (protocol.ts). */
function isLate(error: unknown): boolean {
  return error instanceof FloodgateError && error.code === 'STORE_TIMEOUT';
}
