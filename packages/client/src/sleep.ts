/**
 * Timers hold a signed 32-bit delay: past 2^31 − 1 ms (24.8 days) `setTimeout` fires at once.
 * Longer waits are chained in steps of that size, so no option value can make a wait end early.
 */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** Calls `fn` after `ms` (any length, `Infinity` for never); the returned function cancels it. */
export function later(ms: number, fn: () => void): () => void {
  let timer: ReturnType<typeof setTimeout>;
  const arm = (left: number): void => {
    const step = Math.min(left, MAX_TIMER_MS);
    timer = setTimeout(() => (left > step ? arm(left - step) : fn()), step);
  };
  arm(ms);
  return () => clearTimeout(timer);
}

/**
 * Waits `ms`, or rejects with the signal's reason the moment it aborts. The timer is cleared on
 * abort, so a cancelled wait leaves nothing behind that keeps a process (or a page) alive.
 */
export function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  if (ms <= 0) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const onAbort = (): void => {
      cancel();
      reject(abortReason(signal as AbortSignal));
    };
    const cancel = later(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Older runtimes leave `reason` undefined; an AbortError stands in, as fetch would throw. */
export function abortReason(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  return new DOMException('This operation was aborted', 'AbortError');
}
