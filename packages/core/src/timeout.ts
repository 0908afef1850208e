// A store call bounded in time, shared by the limiter and the concurrency limiter.
import { FloodgateError } from './errors.js';

// Where there is one, the timeout is decided in the event loop's check phase: a timer that fires
// late because this process was busy (GC, CPU-bound work) must not beat a reply that arrived in
// time and waits in the socket; the poll phase in between delivers it first. Taken at load, so
// fake timers installed later move the timer and leave this hop real.
// Also the rule of any store wrapper with deadlines of its own (a ShardedStore's shard guard).
const immediate = typeof setImmediate === 'function' ? setImmediate : undefined;
/**
 * Runs `fn` after the I/O pending now has been read (`setImmediate`; at once where there is
 * none): where a deadline that came due is decided.
 * @internal
 * @example
 * ```ts
 * import { afterIo } from '@floodgate/core/internal';
 *
 * setTimeout(() => afterIo(() => console.log('a reply that came in time has been read')), 100);
 * ```
 */
export const afterIo: (fn: () => void) => void =
  immediate === undefined ? (fn) => fn() : (fn) => immediate(fn);

/**
 * `promise`, or `STORE_TIMEOUT` after `ms` (decided after pending I/O); as is without `ms`. With
 * `deadline` (a `performance.now()` instant, the one a Redis script compares its `TIME` with),
 * never before it; as a function (a store that may move it, `Store.waitUntil`), read each time
 * the timer fires.
 */
export function withTimeout<T>(
  promise: Promise<T>,
  ms: number | undefined,
  deadline?: number | (() => number | undefined),
): Promise<T> {
  if (ms === undefined) return promise;
  // One promise and one timer per call, cleared as the store answers: `Promise.race` and
  // `finally` made four promises more, and as many microtask hops, on every decision.
  return new Promise<T>((resolve, reject) => {
    const fail = () =>
      reject(new FloodgateError('STORE_TIMEOUT', `store did not answer within ${ms} ms`));
    // Node arms a timer from the event loop's time, cached in whole ms at the start of the loop's
    // turn: it can fire up to a ms, and more after a long turn, before `performance.now()` reaches
    // the deadline. A caller that gave up then would answer without a script that may still
    // charge (it runs before the deadline), so an early timer waits out the rest.
    // The deadline is read after pending I/O too: after this process stalled (CPU starved, a long
    // GC), a store that moves deadlines (`Store.waitUntil`: a busy store holds calls back while
    // it keeps answering) must first read the answers that came meanwhile, or it takes its own
    // silence for the store's and gives up on calls it would have sent.
    let settled = false;
    const check = () => {
      if (settled) return;
      const until = typeof deadline === 'function' ? deadline() : deadline;
      const left = until === undefined ? 0 : until - performance.now();
      if (left > 0) timer = setTimeout(fire, Math.ceil(left));
      else fail();
    };
    const fire = () => afterIo(check);
    let timer = setTimeout(fire, ms);
    // Promise.resolve: a store's thenable is followed as `Promise.race` followed it.
    Promise.resolve(promise).then(
      (value) => {
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        settled = true;
        clearTimeout(timer);
        reject(error);
      },
    );
  });
}
