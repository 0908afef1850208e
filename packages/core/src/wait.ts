// `limiter.wait()`: waiters of one identity in a queue of their own, served first in, first out.
// A queue has one timer, for its first waiter only: when it fires, that waiter alone asks the
// store again (no thundering retries); once it is admitted the next one asks at once.
import { FloodgateError } from './errors.js';
import type { WaitOptions } from './limiter-types.js';
import { checkOptions, type OptionNames } from './options.js';
import type { Decision } from './types.js';

const WAIT_NAMES = {
  cost: true,
  maxWaitMs: true,
  signal: true,
} as const satisfies OptionNames<WaitOptions>;

interface Waiter {
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
  /** When the first waiter may ask again (`performance.now()`). */
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

function timedOut(left: number, denial: Decision): FloodgateError {
  const error = new FloodgateError(
    'WAIT_TIMEOUT',
    `the turn comes in ${denial.retryAfterMs} ms or later, after the ${Math.max(0, Math.floor(left))} ms left of maxWaitMs`,
  );
  denials.set(error, denial);
  return error;
}

/**
 * The options of `wait()`, checked before any store is touched, the cost as `limit()` checks it
 * (the limiter checks it against its capacity). Throws `INVALID_OPTION` or `INVALID_COST`.
 */
export function checkWaitOptions(options: unknown): {
  cost: number;
  maxWaitMs: number;
  signal: AbortSignal | undefined;
} {
  if (typeof options !== 'object' || options === null) {
    throw new FloodgateError('INVALID_OPTION', 'wait() takes { maxWaitMs, cost?, signal? }');
  }
  checkOptions('wait()', options, WAIT_NAMES);
  const { cost = 1, maxWaitMs, signal } = options as WaitOptions & Record<string, unknown>;
  if (typeof cost !== 'number' || !Number.isSafeInteger(cost) || cost <= 0) {
    throw new FloodgateError(
      'INVALID_COST',
      `cost must be a positive safe integer, got ${String(cost)}`,
    );
  }
  if (
    typeof maxWaitMs !== 'number' ||
    !(maxWaitMs === Number.POSITIVE_INFINITY || (Number.isSafeInteger(maxWaitMs) && maxWaitMs >= 0))
  ) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `wait(): maxWaitMs must be a whole number ≥ 0 or Infinity, got ${String(maxWaitMs)}`,
    );
  }
  const s = signal as AbortSignal | undefined;
  if (
    s !== undefined &&
    (typeof s !== 'object' || s === null || typeof s.addEventListener !== 'function')
  ) {
    throw new FloodgateError('INVALID_OPTION', 'wait(): signal must be an AbortSignal');
  }
  return { cost, maxWaitMs, signal: s };
}

/** The waiting room of one limiter. `decide` is its `limit()`, unreported. */
export class WaitQueues {
  readonly #queues = new Map<string, Queue>();
  readonly #decide: (identity: string, cost: number) => Promise<Decision>;
  readonly #shapes: boolean;

  /** `shapes`: sleep an admission's `delayMs` before resolving (off in shadow mode). */
  constructor(decide: (identity: string, cost: number) => Promise<Decision>, shapes: boolean) {
    this.#decide = decide;
    this.#shapes = shapes;
  }

  wait(
    identity: string,
    cost: number,
    maxWaitMs: number,
    signal: AbortSignal | undefined,
  ): Promise<Decision> {
    if (signal?.aborted === true) return Promise.reject(aborted());
    return new Promise<Decision>((resolve, reject) => {
      const now = performance.now();
      const w: Waiter = {
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
        reject(timedOut(w.deadline - now, q.denial));
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
    this.#decide(identity, w.cost).then(
      (d) => {
        q.busy = false;
        if (w.done) return this.#next(identity, q); // aborted while the store was asked
        if (d.allowed) {
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
        const retryAt = now + d.retryAfterMs;
        // First in, first out: no one is admitted before the first waiter, so every waiter whose
        // time runs out before its turn is told now, without waiting.
        for (const other of q.waiters.slice()) {
          if (retryAt > other.deadline) {
            this.#remove(q, other);
            this.#settle(other, { error: timedOut(other.deadline - now, d) });
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
