// Store calls bounded in time, shared by the limiter and the concurrency limiter.
import { FloodgateError } from './errors.js';

// Where there is one, the timeout is decided in the event loop's check phase: a timer that fires
// late because this process was busy (GC, CPU-bound work) must not beat a reply that arrived in
// time and waits in the socket; the poll phase in between delivers it first. Taken at load, so
// fake timers installed later move the timer and leave this hop real.
const immediate = typeof setImmediate === 'function' ? setImmediate : undefined;
const afterIo: (fn: () => void) => void =
  immediate === undefined ? (fn) => fn() : (fn) => immediate(fn);

/** A call waiting for its store: `reject` until it settles or times out, then undefined. */
interface Waiter {
  readonly deadline: number;
  reject: ((error: unknown) => void) | undefined;
}

/**
 * The store calls of one limiter, each bounded by the same `ms`, under one Node timer. Their
 * deadlines (`performance.now()` instants, the ones a Redis script compares its `TIME` with) come
 * in the order the calls are made, so they wait in a queue and one timer, armed for the oldest
 * call still waiting, serves them all: a call costs a queue slot instead of a timer set and
 * cleared (at 256 in flight that timer was about a microsecond of Node CPU per decision, with
 * its garbage). A call is never given up before its deadline: Node arms a timer from the event
 * loop's time, cached in whole ms at the start of the loop's turn, so it can fire early; the
 * queue rechecks `performance.now()`. A caller that gave up early would answer without a script
 * that may still charge (it runs before the deadline). The timer keeps the process alive only
 * while a call waits.
 */
export class Timeouts {
  readonly #ms: number;
  #queue: Waiter[] = [];
  #head = 0;
  #waiting = 0;
  /** Armed for the oldest waiting deadline, or fired and awaiting `#expire`. */
  #timer: ReturnType<typeof setTimeout> | undefined;

  constructor(ms: number) {
    this.#ms = ms;
  }

  /** `promise`, or `STORE_TIMEOUT` once `deadline` has passed (decided after pending I/O). */
  bound<T>(promise: Promise<T>, deadline: number = performance.now() + this.#ms): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const w: Waiter = { deadline, reject };
      this.#queue.push(w);
      if (this.#waiting++ === 0 && this.#timer !== undefined) this.#timer.ref();
      if (this.#timer === undefined) this.#arm(deadline);
      // Promise.resolve: a store's thenable is followed as `Promise.race` followed it.
      Promise.resolve(promise).then(
        (value) => {
          if (this.#settle(w)) resolve(value);
        },
        (error: unknown) => {
          if (this.#settle(w)) reject(error);
        },
      );
    });
  }

  /** Marks `w` settled (false if it had timed out already) and drops settled calls at the head. */
  #settle(w: Waiter): boolean {
    if (w.reject === undefined) return false;
    w.reject = undefined;
    if (--this.#waiting === 0) this.#timer?.unref();
    const q = this.#queue;
    while (this.#head < q.length && q[this.#head]!.reject === undefined) this.#head++;
    this.#compact();
    return true;
  }

  #compact(): void {
    const q = this.#queue;
    if (this.#head === q.length) {
      q.length = 0;
      this.#head = 0;
    } else if (this.#head >= 1024 && this.#head * 2 >= q.length) {
      this.#queue = q.slice(this.#head);
      this.#head = 0;
    }
  }

  #arm(deadline: number): void {
    const timer = setTimeout(this.#fire, Math.max(0, Math.ceil(deadline - performance.now())));
    if (this.#waiting === 0) timer.unref();
    this.#timer = timer;
  }

  readonly #fire = (): void => {
    afterIo(this.#expire);
  };

  /** Times out every waiting call whose deadline has passed; re-arms for the next one. */
  readonly #expire = (): void => {
    this.#timer = undefined;
    const q = this.#queue;
    const now = performance.now();
    while (this.#head < q.length) {
      const w = q[this.#head]!;
      if (w.reject !== undefined) {
        if (w.deadline > now) break;
        const reject = w.reject;
        w.reject = undefined;
        this.#waiting--;
        reject(new FloodgateError('STORE_TIMEOUT', `store did not answer within ${this.#ms} ms`));
      }
      this.#head++;
    }
    this.#compact();
    if (this.#head < this.#queue.length) this.#arm(this.#queue[this.#head]!.deadline);
  };
}
