// The arithmetic of ModelApiPacer: what each limit allows, and when a call fits in it.
import { invalidOption } from '../errors.js';
import type { TokenCost } from './estimate.js';
import { DIMENSIONS, type Dimension, type ModelRateLimits } from './read.js';

export type Costs = Record<Dimension, number>;

/** A call the pacer has reserved and not yet seen the answer to. */
export interface Reservation {
  /** Units reserved under the key up to and including this call, per limit. */
  readonly reserved: Costs;
  readonly cost: Costs;
  /** Local ms it was to be sent at. */
  readonly slot: number;
}

/** One limit as the pacer knows it, from one response. */
export interface Budget {
  /** The reservation whose response reported it. */
  readonly seq: number;
  /** When that call was sent (local ms). */
  readonly sentAt: number;
  /** What was left, as far as the pacer may count on it (Anthropic's rounding taken off). */
  readonly remaining: number;
  readonly limit: number | undefined;
  /** Local ms at which the server said the limit is whole again. */
  readonly resetAt: number;
  /** Units reserved under the key up to and including the reported call. */
  readonly base: number;
  /** Units per ms it refills at, learned from a response that was below its limit. */
  readonly rate: number | undefined;
}

export interface KeyState {
  lastSlot: number;
  /** Units reserved under the key so far, per limit. */
  readonly reserved: Costs;
  readonly budgets: Map<Dimension, Budget>;
  readonly inFlight: Map<number, Reservation>;
}

/** Anthropic rounds remaining tokens to the nearest thousand: up to this many are not there. */
const ROUNDING = 500;
/**
 * Calls sent this close together may reach the server in either order (separate connections,
 * a TLS handshake on one of them): one sent less than this before a reported call may have been
 * admitted after it, so until it is answered it is counted as not in the report.
 */
const RACE_MS = 1000;

/** What has been reserved against `b` since the response that reported it. */
export function spentSince(state: KeyState, b: Budget, d: Dimension): number {
  let spent = state.reserved[d] - b.base;
  for (const [seq, r] of state.inFlight) {
    if (seq < b.seq && r.slot > b.sentAt - RACE_MS) spent += r.cost[d];
  }
  return spent;
}

/** What `b` allows at `now`, `spent` having been reserved since. */
export function available(b: Budget, spent: number, now: number): number {
  return (now < b.resetAt ? b.remaining : (b.limit ?? Number.POSITIVE_INFINITY)) - spent;
}

/**
 * The earliest local time at or after `from` when `cost` fits, `spent` having been reserved
 * since the response. Before the reset only what it reported counts (no refill is assumed: a
 * window refills nothing until then); at the reset the whole limit; past it, the refill rate.
 */
export function fitsAt(b: Budget, spent: number, cost: number, from: number): number {
  // More than the whole limit can never fit: it goes when the limit is whole, the server decides.
  const need = b.limit === undefined ? cost : Math.min(cost, b.limit);
  if (from < b.resetAt && b.remaining - spent >= need) return from;
  if (b.limit === undefined) return Math.max(from, b.resetAt);
  const short = spent + need - b.limit;
  if (short <= 0 || b.rate === undefined) return Math.max(from, b.resetAt);
  return Math.max(from, b.resetAt + short / b.rate);
}

/** A call's charge against each limit; a plain number goes in full to each token limit. */
export function costs(tokens: TokenCost): Costs {
  const split = typeof tokens === 'object' && tokens !== null;
  const input = split ? tokens.input : tokens;
  const output = split ? tokens.output : tokens;
  if (!(input >= 0 && output >= 0 && Number.isFinite(input + output))) {
    throw invalidOption(
      `ModelApiPacer tokens must be a number or { input, output }, >= 0: got ${String(input)}, ${String(output)}`,
    );
  }
  return {
    requests: 1,
    tokens: split ? input + output : input,
    inputTokens: input,
    outputTokens: output,
  };
}

/** The budgets a response reports, for the call reserved as `seq`. */
export function readBudgets(
  limits: ModelRateLimits,
  seq: number,
  sent: Reservation,
  localNow: number,
  known: ReadonlyMap<Dimension, Budget>,
): Map<Dimension, Budget> {
  const out = new Map<Dimension, Budget>();
  // Anthropic's `tokens` is the most restrictive of input and output: with those two known,
  // it would charge every call twice against one of them.
  const split = limits.inputTokens !== undefined || limits.outputTokens !== undefined;
  for (const d of DIMENSIONS) {
    const l = limits[d];
    if (l?.remaining === undefined || l.resetMs === undefined || (d === 'tokens' && split)) {
      continue;
    }
    const rounded = limits.provider === 'anthropic' && d !== 'requests' && l.remaining % 1000 === 0;
    const low = rounded ? Math.max(0, l.remaining - ROUNDING) : l.remaining;
    const high = rounded ? l.remaining + ROUNDING : l.remaining;
    // A limit refilled to whole over resetMs refills at (limit - remaining) / resetMs; read
    // with the most that may be left, so that a rounded figure never makes it look faster.
    const rate =
      l.limit !== undefined && l.limit > high && l.resetMs > 0
        ? (l.limit - high) / l.resetMs
        : known.get(d)?.rate;
    out.set(d, {
      seq,
      sentAt: sent.slot,
      remaining: low,
      limit: l.limit,
      resetAt: localNow + l.resetMs,
      base: sent.reserved[d],
      rate,
    });
  }
  return out;
}
