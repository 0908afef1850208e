/** The longest delay `setTimeout` takes; beyond it, it fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

/**
 * Resolves after `ms`, or as soon as `signal` aborts (a client that disconnected while queued
 * must not hold a timer or a worker). True when the full wait elapsed.
 * @example
 * Holding an admitted leaky-bucket request for its turn, in a fetch-style adapter.
 * ```ts
 * import { type Outcome, queueDelay } from '@floodgate/http';
 *
 * declare const request: Request;
 * declare const outcome: Outcome & { action: 'next' };
 * if (!(await queueDelay(outcome.delayMs, request.signal))) {
 *   // The client went away while queued: do not run the handler.
 * }
 * ```
 */
export function queueDelay(ms: number, signal?: AbortSignal): Promise<boolean> {
  if (ms <= 0) return Promise.resolve(!signal?.aborted);
  if (signal?.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    // A timer longer than 2^31 - 1 ms fires at once: long waits are waited in chunks.
    const arm = (left: number): void => {
      if (left > MAX_TIMER_MS) {
        timer = setTimeout(arm, MAX_TIMER_MS, left - MAX_TIMER_MS);
        return;
      }
      timer = setTimeout(() => {
        signal?.removeEventListener('abort', onAbort);
        resolve(true);
      }, left);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    arm(ms);
  });
}
