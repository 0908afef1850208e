import { parseRateLimitHeaders } from '@floodgate/core/headers';
import { invalidOption } from './errors.js';
import { checkNames } from './option-names.js';
import { serverNow } from './server-delay.js';

/**
 * Options of a {@link Pacer}.
 * @example
 * ```ts
 * import { createPacer, type PacerOptions } from '@floodgate/client';
 *
 * const options: PacerOptions = { maxOrigins: 50 };
 * const pacer = createPacer(options);
 * ```
 * @public
 */
export interface PacerOptions {
  /**
   * Most origins remembered at once; past it the oldest is forgotten.
   * @default 1000
   */
  readonly maxOrigins?: number;
}

interface Quota {
  remaining: number;
  /** Local ms at which the server said the quota is whole again. */
  resetAt: number;
  /** The reservation number of the request whose response this came from. */
  seq: number;
  /** Ms between requests once the quota has reset, when the policy says `q` and `w`. */
  gapMs: number;
}

interface Origin {
  seq: number;
  lastSlot: number;
  quotas: Map<string, Quota>;
}

/**
 * A reserved send time: wait `waitMs`, then send, then hand `seq` back to `observe`. `seq` 0
 * means nothing was reserved (the wait was beyond what the caller would accept).
 * @example
 * A pacer driving an HTTP call of your own.
 * ```ts
 * import { setTimeout as sleep } from 'node:timers/promises';
 * import { createPacer, type PaceSlot } from '@floodgate/client';
 *
 * const pacer = createPacer();
 * const origin = 'https://api.example.com';
 * const slot: PaceSlot = pacer.reserve(origin, Date.now());
 * await sleep(slot.waitMs);
 * const res = await fetch(`${origin}/items`);
 * pacer.observe(origin, slot.seq, res.headers, Date.now());
 * ```
 * @public
 */
export interface PaceSlot {
  readonly waitMs: number;
  readonly seq: number;
}

/**
 * Spaces requests per origin from what the server reports (`remaining` and reset, per policy),
 * so that a client that follows it is not refused. The remaining quota is spread evenly over the
 * time to its reset; requests sent after the response that reported it count against it, so
 * concurrent calls share it correctly; a quota at zero holds requests until its reset.
 * @example
 * Two clients of one API pace by the same quota.
 * ```ts
 * import { Pacer, withRetry } from '@floodgate/client';
 *
 * const pacer = new Pacer({ maxOrigins: 100 });
 * const search = withRetry(fetch, { pacing: pacer });
 * const upload = withRetry(fetch, { pacing: pacer, retries: 1 });
 * ```
 * @public
 */
export class Pacer {
  readonly #origins = new Map<string, Origin>();
  readonly #maxOrigins: number;

  constructor(options: PacerOptions = {}) {
    checkNames('Pacer', options, ['maxOrigins']);
    const maxOrigins = options.maxOrigins ?? 1000;
    if (!(Number.isSafeInteger(maxOrigins) && maxOrigins > 0)) {
      throw invalidOption(`pacer maxOrigins must be a positive integer`);
    }
    this.#maxOrigins = maxOrigins;
  }

  /**
   * Reserves the next send time for `origin`. A wait longer than `maxWaitMs` is not reserved:
   * the slot comes back with that wait and `seq` 0, and nothing is counted. `input` and `init`
   * are the fetch call's own: a Pacer counts requests and ignores them; a subclass may weigh the
   * request by them (`ModelApiPacer`, in `@floodgate/client/model-apis`, counts its tokens).
   */
  reserve(
    origin: string,
    now: number,
    maxWaitMs = Infinity,
    _input?: string | URL | Request,
    _init?: RequestInit,
  ): PaceSlot {
    const state = this.#state(origin);
    let slot = now;
    for (const [key, q] of state.quotas) {
      if (q.resetAt <= now) {
        // Reset has passed: the quota is whole again and the next response will say so.
        state.quotas.delete(key);
        continue;
      }
      const available = q.remaining - (state.seq - q.seq);
      const from = Math.max(now, state.lastSlot);
      const at =
        available > 0
          ? state.lastSlot + (q.resetAt - from) / available
          : Math.max(q.resetAt, state.lastSlot + q.gapMs);
      slot = Math.max(slot, at);
    }
    const waitMs = Math.max(0, Math.ceil(slot - now));
    if (waitMs > maxWaitMs) return { waitMs, seq: 0 };
    state.seq += 1;
    state.lastSlot = Math.max(state.lastSlot, slot);
    return { waitMs, seq: state.seq };
  }

  /** Records what a response to the request sent with reservation `seq` said. */
  observe(origin: string, seq: number, headers: Headers, localNow: number): void {
    const parsed = parseRateLimitHeaders(headers, serverNow(headers, localNow) ?? localNow);
    if (parsed?.remaining === undefined || parsed.resetSeconds === undefined) return;
    const state = this.#state(origin);
    const key = `${parsed.source}:${parsed.policy ?? ''}`;
    const known = state.quotas.get(key);
    // A response overtaken by a later one describes an older state.
    if (known && known.seq > seq) return;
    const gapMs =
      parsed.limit && parsed.windowSeconds ? (parsed.windowSeconds * 1000) / parsed.limit : 0;
    state.quotas.set(key, {
      remaining: parsed.remaining,
      resetAt: localNow + parsed.resetSeconds * 1000,
      seq,
      gapMs,
    });
  }

  #state(origin: string): Origin {
    let state = this.#origins.get(origin);
    if (state) return state;
    if (this.#origins.size >= this.#maxOrigins) {
      const oldest = this.#origins.keys().next().value;
      if (oldest !== undefined) this.#origins.delete(oldest);
    }
    state = { seq: 0, lastSlot: 0, quotas: new Map() };
    this.#origins.set(origin, state);
    return state;
  }
}

/**
 * A pacer to share between clients that call the same servers.
 * @example
 * ```ts
 * import { createPacer, withRetry } from '@floodgate/client';
 *
 * const pacer = createPacer();
 * const api = withRetry(fetch, { pacing: pacer });
 * const admin = withRetry(fetch, { pacing: pacer, retries: 0 }); // same quota, paced together
 * ```
 * @public
 */
export function createPacer(options?: PacerOptions): Pacer {
  return new Pacer(options);
}
