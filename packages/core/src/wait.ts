// `limiter.wait()`: waiters of one identity in a queue of their own, served first in, first out.
// A queue has one timer, for its first waiter only: when it fires, that waiter alone asks the
// store again (no thundering retries); once it is admitted the next one asks at once. A waiter
// asks with its leaky buckets' queues cut to its time left (wait-turn.ts): a turn past its
// maxWaitMs is refused, and charged nothing.
import { FloodgateError } from './errors.js';
import type { Decision, Policy } from './types.js';
import { Turns } from './wait-turn.js';

export { checkWaitOptions } from './wait-options.js';

interface Waiter {
  /** As the caller gave it (`giveBack` takes it); the queue is keyed by its encoded form. */
  readonly identity: string;
  readonly cost: number;
  /** `performance.now()` instant after which it must not be admitted. */
  readonly deadline: number;
  readonly signal: AbortSignal | undefined;
  readonly resolve: (d: Decision) => void;
  readonly reject: (e: unknown) => void;
  onAbort: (() => void) | undefined;
  done: boolean;
}

interface Queue {
  readonly waiters: Waiter[];
  /** The first waiter's store call is in flight. */
  busy: boolean;
  timer: ReturnType<typeof setTimeout> | undefined;
  /** The first waiter, admitted, sleeping its `delayMs` before it resolves. */
  held: { readonly waiter: Waiter; readonly decision: Decision } | undefined;
  /** No waiter is admitted before this (`performance.now()`): the first one's retry or turn. */
  retryAt: number;
  /** The denial that set `retryAt`. */
  denial: Decision | undefined;
}

// setTimeout overflows past 2^31 - 1 ms (it fires at once): longer waits are slept in chunks.
const MAX_TIMER_MS = 2_147_483_647;

const denials = new WeakMap<FloodgateError, Decision>();

/** The denial a `WAIT_TIMEOUT` error was raised on (for `onDecision`). */
export function timedOutDecision(error: FloodgateError): Decision | undefined {
  return denials.get(error);
}

function aborted(): FloodgateError {
  return new FloodgateError('ABORTED', 'the wait was aborted');
}

/** `turnMs`: from now, the earliest the turn can come. */
function timedOut(left: number, turnMs: number, denial: Decision): FloodgateError {
  const error = new FloodgateError(
    'WAIT_TIMEOUT',
    `the turn comes in ${Math.ceil(turnMs)} ms or later, after the ${Math.max(0, Math.floor(left))} ms left of maxWaitMs`,
  );
  denials.set(error, denial);
  return error;
}

/**
 * What the waiting room asks of its limiter. `decide` is its `limit()`, unreported; with
 * `policies`, it evaluates those instead (the same ids: the same keys and state) and bypasses
 * the blocked-key cache, whose denials must be the limiter's own.
 */
export interface WaitPort {
  decide(id: string, cost: number, policies: readonly Policy[] | undefined): Promise<Decision>;
  /** Gives back what an admission charged (`limiter.refund` with its decision). */
  giveBack(identity: string, cost: number, decision: Decision): Promise<unknown>;
}

/** The waiting room of one limiter, keyed by encoded identity. */
export class WaitQueues {
  readonly #queues = new Map<string, Queue>();
  readonly #port: WaitPort;
  readonly #shapes: boolean;
  readonly #turns: Turns;

  /**
   * `shapes`: sleep an admission's `delayMs` before resolving, and hold it within maxWaitMs (off
   * in shadow mode, where nothing is held back). `policies`: the limiter's.
   */
  constructor(port: WaitPort, shapes: boolean, policies: readonly Policy[]) {
    this.#port = port;
    this.#shapes = shapes;
    this.#turns = new Turns(policies);
  }

  /** `identity` encoded (the queue's key), and as the caller `given` it. */
  wait(
    identity: string,
    cost: number,
    maxWaitMs: number,
    signal: AbortSignal | undefined,
    given: string,
  ): Promise<Decision> {
    if (signal?.aborted === true) return Promise.reject(aborted());
    return new Promise<Decision>((resolve, reject) => {
      const now = performance.now();
      const w: Waiter = {
        identity: given,
        cost,
        deadline: now + maxWaitMs,
        signal,
        resolve,
        reject,
        onAbort: undefined,
        done: false,
      };
      let q = this.#queues.get(identity);
      if (q === undefined) {
        q = {
          waiters: [],
          busy: false,
          timer: undefined,
          held: undefined,
          retryAt: 0,
          denial: undefined,
        };
        this.#queues.set(identity, q);
      }
      // Behind a first waiter that was told to wait: this one cannot go before that turn.
      if (q.denial !== undefined && q.retryAt > w.deadline) {
        reject(timedOut(w.deadline - now, q.retryAt - now, q.denial));
        return;
      }
      q.waiters.push(w);
      if (signal !== undefined) {
        const queue = q;
        w.onAbort = () => this.#abort(identity, queue, w);
        signal.addEventListener('abort', w.onAbort, { once: true });
      }
      if (q.waiters.length === 1 && !q.busy && q.timer === undefined) this.#attempt(identity, q);
    });
  }

  #settle(w: Waiter, outcome: { decision: Decision } | { error: unknown }): void {
    if (w.done) return;
    w.done = true;
    if (w.onAbort !== undefined) w.signal!.removeEventListener('abort', w.onAbort);
    if ('decision' in outcome) w.resolve(outcome.decision);
    else w.reject(outcome.error);
  }

  #remove(q: Queue, w: Waiter): void {
    const i = q.waiters.indexOf(w);
    if (i >= 0) q.waiters.splice(i, 1);
  }

  /** The first waiter asks the store. */
  #attempt(identity: string, q: Queue): void {
    const w = q.waiters[0];
    if (w === undefined) {
      this.#queues.delete(identity);
      return;
    }
    q.busy = true;
    q.denial = undefined;
    const started = performance.now();
    // Whole ms, as the store counts: a turn within them is one the waiter can sleep.
    const leftMs = Math.max(0, Math.floor(w.deadline - started));
    const cut = this.#shapes ? this.#turns.cut(w.cost, leftMs) : undefined;
    this.#port.decide(identity, w.cost, cut?.policies).then(
      (d) => {
        q.busy = false;
        if (w.done) return this.#next(identity, q); // aborted while the store was asked
        if (d.allowed) {
          if (d.delayMs > leftMs && this.#shapes) {
            // A turn past the time left that no cut prevented (a leaky bucket with blockFor, or
            // a store that ignored the cut): given back, and refused as a cut would have.
            this.#remove(q, w);
            const denial = { ...d, allowed: false, retryAfterMs: d.delayMs, delayMs: 0 };
            // Refused once the slot is given back, not before: the caller's next call must not
            // find it still charged (on a store whose calls may overtake each other, Deno KV's
            // retried commits, it did, and was denied and blocked for it). The queue waits too.
            q.busy = true;
            const refused = (): void => {
              q.busy = false;
              this.#settle(w, { error: timedOut(leftMs, d.delayMs, denial) });
              this.#next(identity, q);
            };
            // A refund the store failed leaves the slot charged, as for any failed refund.
            this.#port.giveBack(w.identity, w.cost, d).then(refused, refused);
            return;
          }
          if (d.delayMs > 0 && this.#shapes) {
            // Admitted with a turn later (leakyBucket): it resolves when the turn comes, and
            // the next waiter asks then (one timer still).
            q.held = { waiter: w, decision: d };
            this.#arm(identity, q, d.delayMs);
            return;
          }
          this.#remove(q, w);
          this.#settle(w, { decision: d });
          return this.#next(identity, q);
        }
        const now = performance.now();
        // The turn a cut bucket says it gives, from the attempt's start: up to 1 ms earlier than
        // the true one (wait-turn.ts), never later; waiting does not bring it closer.
        const turnAt = cut === undefined ? 0 : started + this.#turns.turnMs(cut, d, w.cost) - 1;
        // From now, as a duration: (now + retryAfterMs) - now need not be retryAfterMs in doubles
        // (one ulp over, and a 3000 ms turn was reported as 3001).
        const turnMs = Math.max(d.retryAfterMs, turnAt - now);
        const retryAt = now + turnMs;
        // First in, first out: no one is admitted before the first waiter, so every waiter whose
        // time runs out before its turn is told now, without waiting.
        for (const other of q.waiters.slice()) {
          if (retryAt > other.deadline) {
            this.#remove(q, other);
            this.#settle(other, { error: timedOut(other.deadline - now, turnMs, d) });
          }
        }
        if (q.waiters.length === 0) return this.#next(identity, q);
        q.retryAt = retryAt;
        q.denial = d;
        this.#arm(identity, q, Math.max(1, d.retryAfterMs));
      },
      (error: unknown) => {
        q.busy = false;
        this.#remove(q, w);
        this.#settle(w, { error });
        this.#next(identity, q);
      },
    );
  }

  #arm(identity: string, q: Queue, ms: number): void {
    const until = performance.now() + ms;
    const fire = (): void => {
      const left = until - performance.now();
      if (left >= 1) {
        q.timer = setTimeout(fire, Math.min(left, MAX_TIMER_MS));
        return;
      }
      q.timer = undefined;
      const held = q.held;
      if (held !== undefined) {
        q.held = undefined;
        this.#remove(q, held.waiter);
        this.#settle(held.waiter, { decision: held.decision });
      }
      this.#next(identity, q);
    };
    q.timer = setTimeout(fire, Math.min(ms, MAX_TIMER_MS));
  }

  /** The next waiter asks now, or the queue is gone. */
  #next(identity: string, q: Queue): void {
    if (q.busy || q.timer !== undefined) return;
    if (q.waiters.length === 0) {
      if (this.#queues.get(identity) === q) this.#queues.delete(identity);
      return;
    }
    this.#attempt(identity, q);
  }

  #abort(identity: string, q: Queue, w: Waiter): void {
    if (w.done) return;
    this.#remove(q, w);
    this.#settle(w, { error: aborted() });
    if (q.held?.waiter === w) {
      // It gave up its turn: the next waiter need not wait for it.
      q.held = undefined;
      clearTimeout(q.timer);
      q.timer = undefined;
      this.#next(identity, q);
    } else if (q.waiters.length === 0 && q.timer !== undefined) {
      clearTimeout(q.timer);
      q.timer = undefined;
      q.denial = undefined;
      this.#next(identity, q);
    }
  }
}
