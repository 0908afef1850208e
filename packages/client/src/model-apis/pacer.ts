import { invalidOption } from '../errors.js';
import { checkNames } from '../option-names.js';
import { Pacer, type PaceSlot } from '../pacing.js';
import { available, costs, fitsAt, type KeyState, readBudgets, spentSince } from './budgets.js';
import { estimateTokens, modelKey, type TokenCost } from './estimate.js';
import { DIMENSIONS, parseModelRateLimits } from './read.js';

/**
 * Options of a {@link ModelApiPacer}.
 * @example
 * Counting with a tokenizer of one's own, and pacing each Azure deployment apart.
 * ```ts
 * import { createModelApiPacer, type ModelApiPacerOptions } from '@floodgate/client/model-apis';
 *
 * declare function countTokens(body: string): number;
 * const options: ModelApiPacerOptions = {
 *   tokens: (_input, init) => countTokens(String(init?.body ?? '')) + 500,
 *   key: (origin, input) => `${origin} ${new URL(String(input)).pathname}`,
 * };
 * const pacer = createModelApiPacer(options);
 * ```
 * @beta
 */
export interface ModelApiPacerOptions {
  /**
   * What a call is expected to spend, from the fetch call's own arguments.
   * @default estimateTokens (a token per 4 characters of a string body, plus its `max_tokens`)
   */
  readonly tokens?: (input: string | URL | Request, init: RequestInit | undefined) => TokenCost;
  /**
   * Which budget a call spends from: calls with one key share the limits their responses report.
   * @default the origin, and the `model` a JSON body names
   */
  readonly key?: (
    origin: string,
    input: string | URL | Request,
    init: RequestInit | undefined,
  ) => string;
  /**
   * Most keys remembered at once; past it the oldest is forgotten.
   * @default 1000
   */
  readonly maxKeys?: number;
}

/** Reservations not yet answered, all keys together; past this many the oldest is forgotten. */
const MAX_IN_FLIGHT = 10_000;
/** A call unanswered this long after its slot failed, or was never handed back: forgotten. */
const FORGET_AFTER_MS = 15 * 60_000;

/**
 * A pacer for model APIs: it keeps requests per minute *and* tokens per minute (Anthropic: input
 * and output tokens apart) under what the API's headers report, so that a batch runs at the
 * provider's limit without being refused. Each call is weighed by `tokens` before it is sent;
 * each response's `x-ratelimit-*` or `anthropic-ratelimit-*` headers say what is left and when
 * each limit is whole again.
 *
 * Per key, per limit: until the reset the call goes when what the response reported, less what
 * was reserved after it (in flight or waiting), covers it; at the reset the whole limit is
 * counted on again; past it, the refill rate the responses showed. Calls leave in the order they
 * were reserved. It makes requests slower, never faster.
 * @example
 * ```ts
 * import { withRetry } from '@floodgate/client';
 * import { ModelApiPacer, modelApiDelay } from '@floodgate/client/model-apis';
 *
 * const pacer = new ModelApiPacer();
 * const openai = withRetry(fetch, {
 *   pacing: pacer,
 *   serverDelay: modelApiDelay,
 *   methods: ['POST'],
 *   maxDelayMs: 120_000,
 * });
 * ```
 * @beta
 */
export class ModelApiPacer extends Pacer {
  readonly #keys = new Map<string, KeyState>();
  /** Whose each unanswered reservation is. */
  readonly #owners = new Map<number, KeyState>();
  readonly #tokens: NonNullable<ModelApiPacerOptions['tokens']>;
  readonly #key: NonNullable<ModelApiPacerOptions['key']>;
  readonly #maxKeys: number;
  #seq = 0;

  constructor(options: ModelApiPacerOptions = {}) {
    // A Pacer, so that `pacing` takes it; none of the Pacer's own state is used.
    super();
    checkNames('ModelApiPacer', options, ['tokens', 'key', 'maxKeys']);
    const { tokens = estimateTokens, key = modelKey, maxKeys = 1000 } = options;
    if (typeof tokens !== 'function' || typeof key !== 'function') {
      throw invalidOption('ModelApiPacer tokens and key must be functions');
    }
    if (!(Number.isSafeInteger(maxKeys) && maxKeys > 0)) {
      throw invalidOption('ModelApiPacer maxKeys must be a positive integer');
    }
    this.#tokens = tokens;
    this.#key = key;
    this.#maxKeys = maxKeys;
  }

  /** Reserves a send time for a fetch call, weighed by `tokens` and keyed by `key`. */
  override reserve(
    origin: string,
    now: number,
    maxWaitMs = Number.POSITIVE_INFINITY,
    input: string | URL | Request = origin,
    init?: RequestInit,
  ): PaceSlot {
    return this.reserveFor(
      this.#key(origin, input, init),
      this.#tokens(input, init),
      now,
      maxWaitMs,
    );
  }

  /**
   * Reserves a send time for a call of `tokens` under `key`, for code that does not go through
   * fetch: wait `waitMs`, call, then hand `seq` and the response headers to `observe`. A wait
   * longer than `maxWaitMs` is not reserved (`seq` 0).
   */
  reserveFor(
    key: string,
    tokens: TokenCost,
    now: number,
    maxWaitMs = Number.POSITIVE_INFINITY,
  ): PaceSlot {
    const cost = costs(tokens);
    const state = this.#state(key);
    const from = Math.max(now, state.lastSlot);
    let slot = from;
    for (const [d, b] of state.budgets) {
      if (cost[d] === 0) continue;
      if (b.limit === undefined && b.resetAt <= from) {
        // Whole again, of a size not given: the next response will say what is left.
        state.budgets.delete(d);
        continue;
      }
      slot = Math.max(slot, fitsAt(b, spentSince(state, b, d), cost[d], from));
    }
    const waitMs = Math.max(0, Math.ceil(slot - now));
    if (waitMs > maxWaitMs) return { waitMs, seq: 0 };
    for (const d of DIMENSIONS) state.reserved[d] += cost[d];
    state.lastSlot = Math.max(state.lastSlot, slot);
    this.#seq += 1;
    if (this.#owners.size >= MAX_IN_FLIGHT) {
      const [oldest, owner] = this.#owners.entries().next().value as [number, KeyState];
      this.#owners.delete(oldest);
      owner.inFlight.delete(oldest);
    }
    this.#owners.set(this.#seq, state);
    state.inFlight.set(this.#seq, { reserved: { ...state.reserved }, cost, slot });
    return { waitMs, seq: this.#seq };
  }

  /** Records what the response to the call reserved as `seq` said. */
  override observe(_origin: string, seq: number, headers: Headers, localNow: number): void {
    const state = this.#owners.get(seq);
    const sent = state?.inFlight.get(seq);
    if (!state || !sent) return;
    this.#owners.delete(seq);
    state.inFlight.delete(seq);
    // Slots only grow, so the oldest unanswered calls come first.
    for (const [old, r] of state.inFlight) {
      if (r.slot >= localNow - FORGET_AFTER_MS) break;
      state.inFlight.delete(old);
      this.#owners.delete(old);
    }
    const limits = parseModelRateLimits(headers, localNow);
    if (!limits) return;
    for (const [d, b] of readBudgets(limits, seq, sent, localNow, state.budgets)) {
      const known = state.budgets.get(d);
      // A later call's report is the fresher one. An earlier call's is taken only where it
      // leaves less: the server may have admitted that call after the later one.
      if (
        !known ||
        seq > known.seq ||
        available(b, spentSince(state, b, d), localNow) <
          available(known, spentSince(state, known, d), localNow)
      ) {
        state.budgets.set(d, b);
      }
    }
  }

  #state(key: string): KeyState {
    let state = this.#keys.get(key);
    if (state) return state;
    if (this.#keys.size >= this.#maxKeys) {
      const [oldest, old] = this.#keys.entries().next().value as [string, KeyState];
      this.#keys.delete(oldest);
      for (const seq of old.inFlight.keys()) this.#owners.delete(seq);
    }
    const reserved = { requests: 0, tokens: 0, inputTokens: 0, outputTokens: 0 };
    state = { lastSlot: 0, reserved, budgets: new Map(), inFlight: new Map() };
    this.#keys.set(key, state);
    return state;
  }
}

/**
 * A {@link ModelApiPacer}, to share between the clients that call one model API.
 * @example
 * ```ts
 * import { withRetry } from '@floodgate/client';
 * import { createModelApiPacer, modelApiDelay } from '@floodgate/client/model-apis';
 *
 * const pacer = createModelApiPacer();
 * const api = withRetry(fetch, { pacing: pacer, serverDelay: modelApiDelay, methods: ['POST'] });
 * const res = await api('https://api.openai.com/v1/chat/completions', {
 *   method: 'POST',
 *   headers: { 'content-type': 'application/json', authorization: 'Bearer sk-...' },
 *   body: JSON.stringify({ model: 'gpt-4o-mini', max_tokens: 200, messages: [] }),
 * });
 * ```
 * @beta
 */
export function createModelApiPacer(options?: ModelApiPacerOptions): ModelApiPacer {
  return new ModelApiPacer(options);
}
