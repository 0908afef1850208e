// The leases `acquire` hands out: one held in a store (the limiter's, or its fallback's), one an
// `'allow'` fallback granted without a store, and the denials. Each knows where it lives, so a
// release goes to the store that granted it and never to another.
import type { Breaker } from './breaker.js';
import type { HoldTimes } from './concurrency-hold.js';
import type { Lease } from './concurrency-types.js';
import { type Duration, parseDuration } from './duration.js';
import { FloodgateError, isCallerError, isFloodgateError, storeError } from './errors.js';
import type { LeaseEvent } from './lease-event.js';
import type { LeaseRef, LeaseStore } from './lease-types.js';
import { withTimeout } from './timeout.js';

/** Reports one lease event, hooks guarded (concurrency-report.ts). */
export type LeaseReport = (event: LeaseEvent, startedAt: number) => void;

/** Where a lease lives: its store, the bound on each call, and the breaker that hears of them. */
export interface Holder {
  readonly store: LeaseStore;
  readonly timeoutMs: number | undefined;
  /** The primary store's breaker; none for a fallback store (in-process). */
  readonly breaker: Breaker | undefined;
}

/** What every lease of one limiter shares. */
export interface LeaseContext {
  readonly leaseMs: number;
  readonly holds: HoldTimes;
  readonly report: LeaseReport | undefined;
}

export function durationOption(value: unknown, what: string): number {
  try {
    return parseDuration(value, what);
  } catch (error) {
    if (!isFloodgateError(error)) throw error;
    throw new FloodgateError('INVALID_OPTION', error.message);
  }
}

/**
 * One store call of a lease, bounded by the holder's timeout; a store failure is counted by the
 * breaker and rejects as `STORE_UNAVAILABLE` / `STORE_TIMEOUT`. Not gated by the breaker: a
 * release is how a slot comes back, and the leases held when the store failed are few.
 */
export async function holderCall<T>(holder: Holder, work: () => Promise<T>): Promise<T> {
  try {
    const value = await withTimeout(work(), holder.timeoutMs);
    holder.breaker?.success();
    return value;
  } catch (cause) {
    if (isCallerError(cause)) throw cause;
    const error = storeError(cause);
    holder.breaker?.failure(error);
    throw error;
  }
}

type Reason = Lease['reason'];

/** A lease granted by a store: remembers whether it was released, so a second release costs no trip. */
export class HeldLease implements Lease {
  readonly allowed = true;
  readonly remaining: number;
  declare readonly reason?: Reason;
  readonly #ref: LeaseRef;
  readonly #identity: string;
  readonly #holder: Holder;
  readonly #context: LeaseContext;
  readonly #grantedAt = performance.now();
  #released: Promise<void> | undefined;

  constructor(
    ref: LeaseRef,
    identity: string,
    remaining: number,
    holder: Holder,
    context: LeaseContext,
    reason: Reason,
  ) {
    this.#ref = ref;
    this.#identity = identity;
    this.remaining = remaining;
    this.#holder = holder;
    this.#context = context;
    if (reason !== undefined) this.reason = reason;
  }

  release(): Promise<void> {
    if (this.#released === undefined) {
      const startedAt = performance.now();
      const attempt = holderCall(this.#holder, () => this.#holder.store.releaseLease(this.#ref));
      const done = attempt.then(
        (live) => {
          const heldMs = performance.now() - this.#grantedAt;
          this.#context.holds.record(heldMs);
          this.#tell(live ? 'released' : 'expired', startedAt, heldMs);
        },
        (error: FloodgateError) => {
          this.#tell('error', startedAt, undefined, error);
          throw error;
        },
      );
      this.#released = done;
      // A failed release may be tried again: forget it, the caller saw the error.
      done.catch(() => {
        if (this.#released === done) this.#released = undefined;
      });
    }
    return this.#released;
  }

  async extend(ms?: Duration): Promise<boolean> {
    const by = ms === undefined ? this.#context.leaseMs : durationOption(ms, 'extend(ms)');
    if (this.#released !== undefined) return false;
    return holderCall(this.#holder, () => this.#holder.store.extendLease(this.#ref, by));
  }

  #tell(
    outcome: LeaseEvent['outcome'],
    startedAt: number,
    heldMs: number | undefined,
    error?: FloodgateError,
  ): void {
    const report = this.#context.report;
    if (report === undefined) return;
    const event = {
      outcome,
      operation: 'release' as const,
      identity: this.#identity,
      cost: this.#ref.cost,
      lease: undefined,
      durationMs: performance.now() - startedAt,
      ...(heldMs === undefined ? {} : { heldMs }),
      ...(error === undefined ? {} : { error }),
    };
    report(event, startedAt);
  }
}

/**
 * What `onStoreError: 'allow'` grants: no store holds it, so its release frees nothing, and it
 * never expires. Its hold time still counts: the request held the work it was let in for.
 */
export class UnheldLease implements Lease {
  readonly allowed = true;
  readonly remaining = 0;
  readonly reason: Reason;
  readonly #identity: string;
  readonly #cost: number;
  readonly #context: LeaseContext;
  readonly #grantedAt = performance.now();
  #released = false;

  constructor(identity: string, cost: number, context: LeaseContext, reason: Reason) {
    this.#identity = identity;
    this.#cost = cost;
    this.#context = context;
    this.reason = reason;
  }

  async release(): Promise<void> {
    if (this.#released) return;
    this.#released = true;
    const now = performance.now();
    const heldMs = now - this.#grantedAt;
    this.#context.holds.record(heldMs);
    this.#context.report?.(
      {
        outcome: 'released',
        operation: 'release',
        identity: this.#identity,
        cost: this.#cost,
        lease: undefined,
        durationMs: 0,
        heldMs,
      },
      now,
    );
  }

  async extend(ms?: Duration): Promise<boolean> {
    if (ms !== undefined) durationOption(ms, 'extend(ms)');
    return !this.#released;
  }
}

const DENIED_RELEASE = (): Promise<void> => Promise.resolve();
const DENIED_EXTEND = (): Promise<boolean> => Promise.resolve(false);

/** A denial: nothing to release or extend. */
export function deniedLease(
  remaining: number,
  retryAfterMs: number,
  expectedWaitMs: number,
  reason: Reason,
): Lease {
  const lease = {
    allowed: false,
    remaining,
    retryAfterMs,
    expectedWaitMs,
    release: DENIED_RELEASE,
    extend: DENIED_EXTEND,
  };
  return reason === undefined ? lease : { ...lease, reason };
}
