// How DenoKvStore gives up or tries again: the errors it reports, a locked SQLite file told
// apart from other failures, and the pauses between tries.
import { FloodgateError, isFloodgateError } from '@floodgate/core';

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A failure of the KV client (closed, I/O error): the store is unavailable. */
export function unavailable(error: unknown): FloodgateError {
  return isFloodgateError(error)
    ? error
    : new FloodgateError(
        'STORE_UNAVAILABLE',
        `DenoKvStore: Deno KV failed: ${error instanceof Error ? error.message : String(error)}`,
        { cause: error },
      );
}

/**
 * SQLite's "database is locked": another process sharing a local database file holds its write
 * lock. Deno's SQLite backend reports it before writing anything, so the call may run again.
 */
export function isBusy(error: unknown): boolean {
  return error instanceof Error && /database is (locked|busy)/i.test(error.message);
}

export function late(): FloodgateError {
  return new FloodgateError(
    'STORE_TIMEOUT',
    "DenoKvStore: the call's deadline passed before its commit; nothing was written",
  );
}

/** True when `deadline` (a `performance.now()` instant) has come. */
export function past(deadline: number | undefined): boolean {
  return deadline !== undefined && performance.now() >= deadline;
}

/**
 * The pause before the next try after `conflicts` lost checks: none after the first (the
 * winner has committed), then full jitter, growing to 32 ms, so writers that keep colliding
 * spread out instead of colliding again in step.
 */
export function conflictPause(conflicts: number): Promise<void> | undefined {
  return conflicts > 1 ? sleep(Math.random() * Math.min(2 ** (conflicts - 1), 32)) : undefined;
}

/**
 * Waiting out a locked SQLite file, as SQLite's own busy handler would (Deno's KV sets none):
 * short sleeps with full jitter, growing to 8 ms, for at most `timeoutMs`.
 */
export class BusyWait {
  readonly #until: number;
  #tries = 0;

  constructor(timeoutMs: number) {
    this.#until = performance.now() + timeoutMs;
  }

  /** Sleeps before the next try; false when there is no time left for one. */
  async wait(): Promise<boolean> {
    if (performance.now() >= this.#until) return false;
    await sleep(Math.random() * Math.min(2 ** ++this.#tries, 8));
    return true;
  }
}
