// How many decisions a Redis store has on the wire at once, and what waits for a place.
//
// A burst (thousands of decisions in one tick) used to go on the wire at once: every call had
// its deadline from the moment it was made, and on a Redis Cluster, where each identity is its
// own script call and the client spends ~100 µs of CPU on each, the tail of the burst was still
// in this process when its deadline passed. Redis was answering as fast as it could, yet most
// decisions fell back to the per-process store (issue 35). The rule now (docs/failure-modes.md):
// a call is sent with `timeoutMs` to run from the moment it is sent; a call that finds
// BATCHED_IN_FLIGHT (LONE_IN_FLIGHT on a cluster) already out waits here, unsent, while the store keeps answering, and gives up
// (STORE_TIMEOUT, never sent, so never charged) once the store has answered nothing for its
// timeoutMs, or after QUEUE_FACTOR times it in all. A store that stops answering is still found
// out within timeoutMs; a store that is busy is not an outage.
import { FloodgateError } from '../errors.js';
import type { PolicyResult, StoreCall } from '../store-types.js';

/**
 * Calls on the wire at once before the next waits, for a store that batches them: 16 full
 * batches, so a burst of a few hundred goes as it did (in one tick's batches), and only a
 * burst of thousands waits in turn.
 */
export const BATCHED_IN_FLIGHT = 1024;
/**
 * The same for a store whose every call is a script run of its own (a cluster client): enough
 * to keep each master busy, few enough that the first runs of a burst are answered within their
 * timeoutMs on a loaded machine (measured: bench:cluster-burst, the suite's four processes).
 */
export const LONE_IN_FLIGHT = 64;
/** A call waits here at most this many times its timeout in all, however busy the store. */
export const QUEUE_FACTOR = 20;

/**
 * Puts a call on the wire with `deadline` (a `performance.now()` instant); `now` is the client
 * clock's reading taken when the call was made, or null for a held call: read it when sent.
 */
type Send = (
  call: StoreCall,
  deadline: number | undefined,
  now: number | undefined | null,
  budget: number | undefined,
) => Promise<readonly PolicyResult[]>;

/** A call held back: how its caller is answered, and how long it may wait. */
interface Held {
  readonly call: StoreCall;
  /** Its timeoutMs: what it had left when it was held. */
  readonly budget: number;
  /** Past this it gives up whatever the store does. */
  readonly cap: number;
  /** The deadline it was sent with; undefined while held. */
  sent: number | undefined;
  /** Its caller gave up: never sent. */
  dropped: boolean;
  resolve: (results: readonly PolicyResult[]) => void;
  reject: (error: unknown) => void;
}

const noop = (): void => {};

/** A run on the wire: its deadline, and whether it no longer counts (settled, or past it). */
interface Wire {
  until: number;
  readonly call: StoreCall;
  gone: boolean;
}

function timedOut(budget: number): FloodgateError {
  return new FloodgateError(
    'STORE_TIMEOUT',
    `store did not answer within ${Math.round(budget)} ms (the call was never sent)`,
  );
}

/** The calls of one store on the wire, and the ones that wait for a place (see above). */
export class SendWindow {
  #inFlight = 0;
  /** `performance.now()` of the last run that settled: the store's last sign of life. */
  #lastAnswer = Number.NEGATIVE_INFINITY;
  /**
   * When runs made earlier were last handed to the client late (`sentLate`): this process was
   * busy until then, so the store could not have been asked, nor heard, before it. Its silence
   * counts from the later of the two.
   */
  #wroteLate = Number.NEGATIVE_INFINITY;
  readonly #queue: Held[] = [];
  #head = 0;
  /** The runs on the wire in the order sent, from `#wireHead` on. */
  readonly #wire: Wire[] = [];
  #wireHead = 0;
  /** Held calls, from held until their run settles: what `waitUntil` reads. */
  readonly #held = new Map<StoreCall, Held>();
  /** Calls sent at once but written later (`sentLate`), until their run settles: their until. */
  readonly #late = new Map<StoreCall, number>();
  readonly #send: Send;
  readonly #max: number;

  constructor(send: Send, max = BATCHED_IN_FLIGHT) {
    this.#send = send;
    this.#max = max;
  }

  /**
   * Sends the call now when there is a place, else holds it until there is one. `budget`: for a
   * call whose caller asks `waitUntil` (`StoreCall.extendable`), its timeoutMs as it stood when
   * the store got it, to run from when it is sent (a call that waited for the store's first
   * `TIME` or behind a reset has not spent it); undefined for any other call.
   */
  submit(
    call: StoreCall,
    now: number | undefined,
    budget: number | undefined,
    waited = false,
  ): Promise<readonly PolicyResult[]> {
    const at = performance.now();
    if (budget !== undefined && (waited ? this.#gaveUp(call, at) : at >= call.deadline!)) {
      // It waited before reaching here (behind a reset of its keys: past its own deadline; for
      // the store's first TIME: past the wait `waitBefore` told): its caller has given up.
      // Never sent, so never charged.
      return Promise.reject(timedOut(budget));
    }
    if (this.#head === this.#queue.length && this.#room(at)) {
      let deadline = call.deadline;
      // Only past a ms is it worth a record: on the hot path the call goes as it came.
      if (budget !== undefined && at + budget > deadline! + 1) {
        deadline = at + budget;
        this.#held.set(call, this.#record(call, budget, at, deadline));
        return this.#sendRecorded(call, deadline, now, budget);
      }
      return this.#out(this.#send(call, deadline, now, budget), deadline, call);
    }
    // No deadline (timeoutMs: false): it waits as long as it takes, as its caller does.
    const spend =
      budget ??
      (call.deadline === undefined ? Number.POSITIVE_INFINITY : Math.max(0, call.deadline - at));
    return new Promise((resolve, reject) => {
      const held = this.#record(call, spend, at, undefined);
      held.resolve = resolve;
      held.reject = reject;
      this.#held.set(call, held);
      this.#queue.push(held);
    });
  }

  /**
   * A call about to wait for the store's first `TIME` before it reaches `submit`, whose caller
   * asks `waitUntil`: until then its wait is read as a held call's, from the store's last answer. Measured from its own deadline alone, a call made early in a loop longer
   * than its timeoutMs gave up while this process could not yet have heard the store's answer.
   */
  waitBefore(call: StoreCall, budget: number): void {
    this.#held.set(call, this.#record(call, budget, performance.now(), undefined));
  }

  /** The wait before `submit` failed (the store's first `TIME`, or a reset): the record goes. */
  abandon(call: StoreCall): void {
    this.#held.delete(call);
  }

  /** Whether the caller of a call that waited (`waitBefore`) has given up; its record goes. */
  #gaveUp(call: StoreCall, at: number): boolean {
    const held = this.#held.get(call);
    // Dropped by `waitUntil`, its caller told so.
    if (held === undefined) return true;
    this.#held.delete(call);
    return this.#until(held) <= at;
  }

  /** The store answered something outside the window's runs (its first `TIME`) at `at`. */
  heard(at: number): void {
    if (at > this.#lastAnswer) this.#lastAnswer = at;
  }

  /** This process handed something to the client late, at `at` (see `#wroteLate`). */
  busyUntil(at: number): void {
    if (at > this.#wroteLate) this.#wroteLate = at;
  }

  #record(call: StoreCall, budget: number, at: number, sent: number | undefined): Held {
    return {
      call,
      budget,
      cap: at + QUEUE_FACTOR * budget,
      sent,
      dropped: false,
      resolve: noop,
      reject: noop,
    };
  }

  /** Sends a call `#held` has a record of, on the wire; the record goes once it settles. */
  #sendRecorded(
    call: StoreCall,
    deadline: number | undefined,
    now: number | undefined | null,
    budget: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    let run: Promise<readonly PolicyResult[]>;
    try {
      run = this.#send(call, deadline, now, budget);
    } catch (error) {
      run = Promise.reject(error);
    }
    const forget = (): void => {
      this.#held.delete(call);
    };
    run.then(forget, forget);
    return this.#out(run, deadline, call);
  }

  /**
   * The store handed `call` to the client at `at`, later than it was given it (this process was
   * busy in between, as while it makes a burst of thousands in one tick: batch.ts, lone.ts), with
   * its budget from then: its caller now waits until `until`, and its run keeps its place on the
   * wire as long.
   */
  sentLate(call: StoreCall, until: number, at: number): void {
    this.busyUntil(at);
    const held = this.#held.get(call);
    if (held !== undefined) held.sent = until;
    else this.#late.set(call, until);
  }

  /**
   * The instant its caller stops waiting for `call` (`Store.waitUntil`): while held, its
   * deadline moved by the store's answers; once sent from here, the deadline it went with.
   * Asked by the caller's timer when it fires: a held call whose wait is over is dropped then,
   * and never sent.
   */
  waitUntil(call: StoreCall): number | undefined {
    const held = this.#held.get(call);
    if (held === undefined) {
      return this.#late.size === 0 ? call.deadline : (this.#late.get(call) ?? call.deadline);
    }
    if (held.sent !== undefined) return held.sent;
    const until = this.#until(held);
    if (until <= performance.now()) this.#drop(held);
    return until;
  }

  /**
   * A held call's deadline: its budget after the store's last answer, within its cap; its own
   * deadline for a caller that does not ask `waitUntil` (`StoreCall.extendable`).
   */
  #until(held: Held): number {
    if (held.call.extendable !== true) return held.call.deadline ?? Number.POSITIVE_INFINITY;
    const moved = Math.max(
      held.call.deadline ?? Number.POSITIVE_INFINITY,
      Math.max(this.#lastAnswer, this.#wroteLate) + held.budget,
    );
    return Math.min(moved, held.cap);
  }

  #drop(held: Held): void {
    held.dropped = true;
    this.#held.delete(held.call);
    held.reject(timedOut(held.budget));
  }

  /**
   * Counts `run` on the wire until it settles or its deadline (`until`) passes, whichever comes
   * first, then lets the held calls have its place. Past its deadline its caller has given up and
   * its script charges nothing: a run that never answers (a master that died, a client that
   * dropped a command) must not keep its place, or one dead node would hold every call back.
   */
  #out(
    run: Promise<readonly PolicyResult[]>,
    until: number | undefined,
    call: StoreCall,
  ): Promise<readonly PolicyResult[]> {
    const wire: Wire = { until: until ?? Number.POSITIVE_INFINITY, call, gone: false };
    this.#wire.push(wire);
    this.#inFlight++;
    const settled = (): void => {
      if (!wire.gone) {
        wire.gone = true;
        this.#inFlight--;
      }
      if (this.#late.size !== 0) this.#late.delete(call);
      this.#lastAnswer = performance.now();
      this.#trim(this.#lastAnswer);
      if (this.#head < this.#queue.length) this.#drain();
    };
    run.then(settled, settled);
    return run;
  }

  /** Forgets the runs at the head of the wire that settled or are past their deadline. */
  #trim(now: number): void {
    const wire = this.#wire;
    let at = this.#wireHead;
    while (at < wire.length) {
      const w = wire[at]!;
      if (!w.gone) {
        if (w.until > now) break;
        // Handed over late, its deadline moved with it (`sentLate`); rare, so looked up here.
        const late = this.#late.get(w.call) ?? this.#held.get(w.call)?.sent;
        if (late !== undefined && late > now) {
          w.until = late;
          break;
        }
        w.gone = true;
        this.#inFlight--;
      }
      at++;
    }
    if (at === wire.length) {
      wire.length = 0;
      at = 0;
    } else if (at > 1024 && at * 2 > wire.length) {
      wire.splice(0, at);
      at = 0;
    }
    this.#wireHead = at;
  }

  /** Whether a call may go on the wire now (runs past their deadline no longer count). */
  #room(now: number): boolean {
    if (this.#inFlight < this.#max) return true;
    this.#trim(now);
    return this.#inFlight < this.#max;
  }

  /** Sends held calls while there is a place; drops the ones whose wait is over. */
  #drain(): void {
    const now = this.#lastAnswer;
    while (this.#head < this.#queue.length && this.#room(now)) {
      const held = this.#queue[this.#head]!;
      this.#queue[this.#head++] = undefined as unknown as Held;
      if (held.dropped) continue;
      if (this.#until(held) <= now) {
        this.#drop(held);
        continue;
      }
      // Its budget from now for a caller that asks `waitUntil`; else the deadline it came with.
      const budget =
        held.call.extendable === true && held.budget !== Number.POSITIVE_INFINITY
          ? held.budget
          : undefined;
      const deadline = budget === undefined ? held.call.deadline : now + budget;
      held.sent = deadline ?? Number.POSITIVE_INFINITY;
      this.#sendRecorded(held.call, deadline, null, budget).then(held.resolve, held.reject);
    }
    if (this.#head === this.#queue.length) {
      this.#queue.length = 0;
      this.#head = 0;
    } else if (this.#head > 1024 && this.#head * 2 > this.#queue.length) {
      // A queue never empty (sustained overload) must not keep every slot it ever used.
      this.#queue.splice(0, this.#head);
      this.#head = 0;
    }
  }
}
