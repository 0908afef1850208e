/** The longest delay `setTimeout` takes; beyond it, it fires at once. */
const MAX_TIMER_MS = 2_147_483_647;

// Requests held for their turn right now, by every middleware in this process: each one is an
// open connection, so `maxQueued` bounds them together, not per middleware or per key.
let heldInProcess = 0;

/** How many requests are held right now in this process. */
export const heldCount = (): number => heldInProcess;

/** Counts one more held request; call `releaseHold` exactly once when its wait ends. */
export function reserveHold(): void {
  heldInProcess++;
}

export function releaseHold(): void {
  heldInProcess--;
}

/**
 * Resolves after `ms`, or as soon as `signal` aborts (a client that disconnected while queued
 * must not hold a timer or a worker). True when the full wait elapsed.
 * @example
 * Holding an admitted leaky-bucket request for its turn, in a fetch-style adapter.
 * ```ts
 * import { type Outcome, queueDelay } from '@floodgate/http/adapter';
 *
 * declare const request: Request;
 * declare const outcome: Outcome & { action: 'next' };
 * if (!(await queueDelay(outcome.delayMs, request.signal))) {
 *   // The client went away while queued: do not run the handler.
 * }
 * ```
 * @public
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
