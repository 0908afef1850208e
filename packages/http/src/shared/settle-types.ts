// The public shape of settling (`rateLimit({ settle })`): what the `settle` function is told, and
// the meter a handler reports its usage on. reservations.ts settles, usage.ts keeps the meter.
import type { Cost } from '@floodgate/core';
import type { Awaitable, RateLimitRequest } from './types.js';

/**
 * What a `settle` function is told once a response is done, to work out what the request
 * really cost.
 * @example
 * Bill what the handler reported, but nothing for a server error.
 * ```ts
 * import type { Cost } from '@floodgate/core';
 * import type { SettleContext } from '@floodgate/http';
 *
 * function actual({ status, aborted, reported }: SettleContext): Cost | undefined {
 *   if (!aborted && status !== undefined && status >= 500) return 0;
 *   return reported; // undefined: the estimate stands
 * }
 * ```
 * @beta
 */
export interface SettleContext<Raw = unknown> {
  /** The request, as the other option functions see it. */
  readonly request: RateLimitRequest<Raw>;
  /**
   * The response's status: the one sent, also when the client left mid-stream; `undefined` when
   * no status was sent (the connection closed first, or a fetch handler threw).
   */
  readonly status: number | undefined;
  /**
   * True when the response did not finish: the client went away (mid-stream too), the body
   * failed or was cancelled, or a fetch handler threw.
   */
  readonly aborted: boolean;
  /**
   * What the handler reported through `usageOf(request)` up to now (an abort: up to the
   * abort); `undefined` when it reported nothing.
   */
  readonly reported: Cost | undefined;
}

/**
 * `rateLimit`'s `settle`: `true` settles each reservation with what the handler reported
 * (`usageOf`); a function returns the actual cost (`undefined`: what was reported, or else the
 * estimate). `false` (the default) charges with `limiter.limit`, nothing to settle.
 * @example
 * ```ts
 * import type { SettleOption } from '@floodgate/http';
 *
 * // A refused upstream call costs nothing; otherwise what the handler reported.
 * const settle: SettleOption = ({ status, reported }) => (status === 502 ? 0 : reported);
 * ```
 * @beta
 */
export type SettleOption<Raw = unknown> =
  | boolean
  | ((context: SettleContext<Raw>) => Awaitable<Cost | undefined>);

/**
 * The usage meter of one request admitted by a `rateLimit` with `settle`: the handler reports
 * what the request really used, as it streams or at its end, and the middleware settles every
 * reservation with it once the response is done (or the client left: what was reported by
 * then). Got with `usageOf(request)`.
 *
 * A number is units for every policy; a record is units per policy name, and a policy it leaves
 * out keeps its estimate (report `{ tokens }` and the request's `requests: 1` still counts). A
 * name none of a limiter's policies has is ignored for that limiter. Reports after the request
 * was settled change nothing.
 * @example
 * ```ts
 * import type { RequestUsage } from '@floodgate/http';
 *
 * declare const usage: RequestUsage;
 * declare const chunks: AsyncIterable<{ text: string; tokens: number }>;
 * for await (const chunk of chunks) usage.add({ tokens: chunk.tokens });
 * usage.report({ tokens: 1_733 }); // the upstream's own count, when it gives one, wins
 * ```
 * @beta
 */
export interface RequestUsage {
  /**
   * Adds to what was reported: a number to a number, a record to a record (per name). Throws
   * `FloodgateError('INVALID_COST')` for a value that is not a safe integer ≥ 0, or for a
   * number added to a record (or the other way round).
   */
  add(units: Cost): void;
  /** Replaces what was reported: the real cost, once known. Throws as `add` does. */
  report(actual: Cost): void;
  /** What was reported so far; `undefined`: nothing (the estimates stand). */
  readonly reported: Cost | undefined;
  /**
   * Resolves once every reservation of the request has been settled (or cancelled, or left at
   * its estimate) by every middleware that made one. Never rejects: failures go to `onError`.
   */
  readonly settled: Promise<void>;
}
