// What a limiter hands its `telemetry` option, types only: the main entry imports nothing of
// OpenTelemetry, `openTelemetry()` (telemetry.ts, the `@floodgate/core/telemetry` entry) builds
// the one implementation Floodgate ships.
import type { BreakerState } from './breaker.js';
import type { DecisionEvent } from './decision-event.js';
import type { LeaseEvent } from './lease-event.js';

/**
 * What a limiter tells its telemetry about itself when it is built. No identity ever appears
 * here or in what a limiter reports later, except in `DecisionEvent.identity`, which an
 * implementation must not record as an attribute.
 * @example
 * ```ts
 * import type { TelemetryTarget } from '@floodgate/core/telemetry';
 *
 * const target: TelemetryTarget = { limiter: 'api', store: 'memory', breakerState: () => undefined };
 * ```
 * @public
 */
export interface TelemetryTarget {
  /** The limiter's `prefix`. */
  readonly limiter: string;
  /** The store's `kind` (`'memory'`, `'ioredis'`, …), or `'custom'` for a store without one. */
  readonly store: string;
  /** The limiter's breaker state now, or undefined without a breaker. */
  readonly breakerState: () => BreakerState | undefined;
}

/**
 * One limiter's telemetry: told of every decision, every store call's duration and every breaker
 * transition. Called on the decision path: it must not throw (the limiter reports and drops an
 * exception as it does for `onDecision`) and should not block.
 * @example
 * A telemetry of your own that counts denials.
 * ```ts
 * import type { LimiterTelemetry, Telemetry } from '@floodgate/core/telemetry';
 *
 * let denials = 0;
 * const counting: Telemetry = {
 *   bind: (): LimiterTelemetry => ({
 *     decided: (event) => { if (event.outcome === 'denied') denials++; },
 *     storeDuration: () => {},
 *     breakerChanged: () => {},
 *   }),
 * };
 * ```
 * @public
 */
export interface LimiterTelemetry {
  /** After each decision; `startedAt` is the `performance.now()` instant it began. */
  decided(event: DecisionEvent, startedAt: number): void;
  /** After each store call (`evaluate`), in seconds, answered or failed. */
  storeDuration(seconds: number): void;
  /** The limiter's breaker moved `from` one state `to` another. */
  breakerChanged(from: BreakerState, to: BreakerState): void;
  /**
   * A concurrency limiter's acquire or release (`createConcurrencyLimiter`); `startedAt` is the
   * `performance.now()` instant the call began. Optional: a telemetry without it hears nothing
   * of leases.
   */
  leased?(event: LeaseEvent, startedAt: number): void;
}

/**
 * A limiter's `telemetry` option: bound once per limiter, when it is built.
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { openTelemetry, type Telemetry } from '@floodgate/core/telemetry';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * const telemetry: Telemetry = openTelemetry();
 * const limiter = createLimiter({
 *   store: new MemoryStore(),
 *   policy: tokenBucket({ limit: 10, interval: '1s' }),
 *   telemetry,
 * });
 * ```
 * @public
 */
export interface Telemetry {
  /**
   * Called once by `createLimiter` or `createConcurrencyLimiter`, with what the limiter says
   * about itself.
   */
  bind(target: TelemetryTarget): LimiterTelemetry;
}
