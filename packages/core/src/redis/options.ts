import { FloodgateError } from '../errors.js';
import type { OptionNames } from '../options.js';

/**
 * Options every Redis-backed store takes.
 * @example
 * Options for a store on the caller's clock that fails fast while disconnected.
 * ```ts
 * import type { RedisStoreOptions } from '@floodgate/core/redis';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const options: RedisStoreOptions = { clock: 'client', now: Date.now, rejectIfNotReady: true };
 * const store = new IoRedisStore(new Redis(), options);
 * ```
 * @public
 */
export interface RedisStoreOptions {
  /**
   * Whose clock decides. `'server'`: the script reads Redis `TIME`, so app servers whose clocks
   * disagree still share one timeline. `'client'`: the script uses `now()` from this process;
   * for deterministic tests and for Redis-compatible servers without `TIME` in scripts.
   * @default 'server'
   */
  clock?: 'server' | 'client';
  /**
   * The clock in integer ms used with `clock: 'client'`, and by the in-process fallback store;
   * with `clock: 'server'`, a quota's period ends are computed at it and the script picks by
   * `TIME` (docs/algorithms.md#quota).
   * @default Date.now
   */
  now?: () => number;
  /**
   * Fail a decision at once (the limiter then applies `onStoreError`) while the client is not
   * connected, instead of letting the client queue the command until it reconnects or gives up
   * (the limiter's `timeoutMs`, 250 ms by default for Redis stores, bounds that wait otherwise).
   * @default false
   */
  rejectIfNotReady?: boolean;
  /**
   * Strict mode: an admission counts only once `count` replicas hold it. The script and a
   * `WAIT count timeoutMs` go to the master in one pipelined round trip, on one connection; if
   * fewer replicas confirm within `timeoutMs`, the call fails with `STORE_UNAVAILABLE` and the
   * limiter's `onStoreError` decides (`'deny'` for zero over-admission across a failover). The
   * charge the master already applied stays there: strict mode may over-count, never over-admit.
   * Costs the replication lag on every admission (see docs/cluster.md). Denials and `peek` do
   * not wait.
   * @default undefined (off: a failover can lose the last acknowledged writes)
   */
  replicas?: { count: number; timeoutMs: number };
  /**
   * Batching: a decision that reaches the store while none of its script runs is in flight is
   * sent at once, alone, through the plain script; the decisions that reach it while one is in
   * flight go to Redis on the next tick as one script run (one `EVALSHA`), each caller answered
   * from its part of the reply with the decision it would have had alone. `maxCalls` caps a
   * batch. Not used in strict mode (`replicas`) nor on a cluster client (the keys of one script
   * must share a slot, and concurrent identities rarely do); see docs/stores.md for what it buys.
   * @default true ({ maxCalls: 64 }): one call in flight pays no deferral, and from a few in
   * flight on it saves CPU on both sides (docs/stores.md#batching)
   */
  batch?: boolean | { maxCalls?: number };
  /**
   * The change feed (docs/algorithms.md#the-blocked-key-cache): a reset is published on
   * `channel` by the script that makes it (and a refund that finds the identity denied, after
   * it), and once a limiter with a blocked-key cache uses this store, one subscriber connection
   * of its own (opened from this client, its socket unref'd, closed with the client) listens
   * there, so a reset made by any process drops the cached denials of every process within a
   * round trip. Processes that share a Redis must agree on the channel. `false`: resets are a
   * plain `DEL`, nothing is subscribed, and the caches serve a denial at most
   * `blockCache.maxStaleMs`.
   * @default true ({ channel: 'floodgate:changes' })
   * @beta
   */
  changes?: boolean | { channel?: string };
}

export const OPTION_NAMES = {
  clock: true,
  now: true,
  rejectIfNotReady: true,
  replicas: true,
  batch: true,
  changes: true,
} as const satisfies OptionNames<RedisStoreOptions>;

export function checkReplicas(value: unknown): { count: number; timeoutMs: number } | undefined {
  if (value === undefined) return undefined;
  const r = value as { count?: unknown; timeoutMs?: unknown } | null;
  const positive = (x: unknown) => typeof x === 'number' && Number.isSafeInteger(x) && x > 0;
  if (typeof r !== 'object' || r === null || !positive(r.count) || !positive(r.timeoutMs)) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'replicas must be { count, timeoutMs }, both positive integers',
    );
  }
  return { count: r.count as number, timeoutMs: r.timeoutMs as number };
}

/** The change feed's channel, or undefined with `changes: false`. */
export function checkChanges(value: unknown, fallback: string): string | undefined {
  if (value === undefined || value === true) return fallback;
  if (value === false) return undefined;
  const channel = (value as { channel?: unknown } | null)?.channel ?? fallback;
  const keys = typeof value === 'object' && value !== null ? Object.keys(value) : [];
  if (
    typeof value !== 'object' ||
    keys.some((k) => k !== 'channel') ||
    typeof channel !== 'string' ||
    channel === ''
  ) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'changes must be a boolean or { channel }, channel a non-empty string',
    );
  }
  return channel;
}
