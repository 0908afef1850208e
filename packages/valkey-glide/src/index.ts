import { RedisStore, type RedisStoreOptions } from '@floodgate/core/redis';
import type {
  LeaseGrant,
  LeaseRef,
  LeaseRequest,
  LeaseStore,
  OverrideStore,
  PolicyResult,
  PolicyState,
  Store,
  StoreCall,
} from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import type { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
import { GlideConnection, isCluster } from './connection.js';

/**
 * Options of `GlideStore`; see `RedisStoreOptions` in `@floodgate/core/redis` for each default.
 * @example
 * Strict mode: an admission counts once one replica holds it (see `RedisStoreOptions.replicas`).
 * ```ts
 * import { GlideStore, type GlideStoreOptions } from '@floodgate/valkey-glide';
 * import { GlideClient } from '@valkey/valkey-glide';
 *
 * const client = await GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: 6379 }] });
 * const options: GlideStoreOptions = { replicas: { count: 1, timeoutMs: 50 } };
 * const store = new GlideStore(client, options);
 * ```
 * @public
 */
export type GlideStoreOptions = RedisStoreOptions;

/**
 * A GLIDE client: `GlideClient` (one node, or a primary and its replicas) or `GlideClusterClient`.
 * @example
 * ```ts
 * import { type GlideStoreClient, GlideStore } from '@floodgate/valkey-glide';
 * import { GlideClient, GlideClusterClient } from '@valkey/valkey-glide';
 *
 * const addresses = [{ host: '127.0.0.1', port: 6379 }];
 * const client: GlideStoreClient = process.env.VALKEY_CLUSTER
 *   ? await GlideClusterClient.createClient({ addresses })
 *   : await GlideClient.createClient({ addresses });
 * const store = new GlideStore(client);
 * ```
 * @public
 */
export type GlideStoreClient = GlideClient | GlideClusterClient;

/**
 * The Valkey GLIDE store: every decision is one `EVALSHA` of Floodgate's limit script sent with
 * `customCommand` (GLIDE routes it by its first key on a cluster), so all processes sharing the
 * server (or cluster) share exact limits. On `NOSCRIPT` (script cache flushed, restart, failover)
 * it re-sends the script with `EVAL` and the same arguments: one extra round trip, where GLIDE's
 * `invokeScript` takes two (see the README for the measurements). It never connects, closes or
 * configures the client. It also takes the promise `createClient` returns, so a store can be made
 * before the connection is up; calls wait for it (or, with `rejectIfNotReady`, fail at once).
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { GlideStore } from '@floodgate/valkey-glide';
 * import { GlideClient } from '@valkey/valkey-glide';
 *
 * const limiter = createLimiter({
 *   store: new GlideStore(GlideClient.createClient({ addresses: [{ host: '127.0.0.1', port: 6379 }] })),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 * const d = await limiter.limit('key_123');
 * ```
 * @public
 */
export class GlideStore implements Store, LeaseStore, OverrideStore {
  /** For metrics and traces (`Store.kind`). */
  readonly kind: string = 'valkey-glide';
  readonly remote = true;
  /** Set with `clock: 'client'` only: the limiter's blocked-key cache then runs on this clock. */
  readonly now?: () => number;
  readonly #clockNow: () => number;
  readonly #connection: GlideConnection;
  readonly #waits: boolean;
  /**
   * The store that decides. Whether it batches depends on the kind of client (a cluster does
   * not): for a client given as a promise, one that does not batch serves until the client is
   * there (calls fail at once meanwhile with `rejectIfNotReady`, and wait for it otherwise), and
   * then one built for that client.
   */
  #store: RedisStore;

  constructor(
    client: GlideStoreClient | PromiseLike<GlideStoreClient>,
    options: GlideStoreOptions = {},
  ) {
    // Set once the store below is built: a promised client cannot arrive before (it is awaited).
    let arrived: ((c: GlideStoreClient) => void) | undefined;
    const connection = new GlideConnection(client, (c) => arrived?.(c));
    const known = connection.client;
    this.#store = new RedisStore(
      connection.transport(known !== undefined && !isCluster(known)),
      options,
    );
    this.#connection = connection;
    this.#waits = options.rejectIfNotReady !== true;
    this.#clockNow = options.now ?? Date.now;
    if (this.#store.now !== undefined) this.now = this.#store.now;
    const checked = { ...options };
    // In the step that sets the client: no call sees the client without the store built for it.
    arrived = (c) => {
      this.#store = new RedisStore(connection.transport(!isCluster(c)), checked);
    };
  }

  /**
   * As every Redis store's, once a client given as a promise is there (with `rejectIfNotReady`,
   * failing at once until then).
   */
  async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    if (this.#connection.client === undefined && this.#waits) await this.#settled();
    return this.#store.evaluate(call);
  }

  /**
   * When the caller of `call` stops waiting (`Store.waitUntil`): the Redis store's answer, for it
   * may hold a call back while busy.
   * @beta
   */
  waitUntil(call: StoreCall): number | undefined {
    return this.#store.waitUntil(call);
  }

  /**
   * As `evaluate`: once a client given as a promise is there, so a reset stays behind the
   * decisions made before it, which wait for the client too (and ahead of those made after it).
   */
  async reset(keys: readonly string[]): Promise<void> {
    // A reset has nothing to send before the client is there, rejectIfNotReady or not.
    if (this.#connection.client === undefined) await this.#settled();
    return this.#store.reset(keys);
  }

  /** The concurrency limiter's calls: as `evaluate`, once a promised client is there. */
  async acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    if (this.#connection.client === undefined && this.#waits) await this.#settled();
    return this.#store.acquireLease(request);
  }

  async releaseLease(lease: LeaseRef): Promise<boolean> {
    if (this.#connection.client === undefined && this.#waits) await this.#settled();
    return this.#store.releaseLease(lease);
  }

  async extendLease(lease: LeaseRef, leaseMs: number): Promise<boolean> {
    if (this.#connection.client === undefined && this.#waits) await this.#settled();
    return this.#store.extendLease(lease, leaseMs);
  }

  /**
   * Per-identity overrides (`OverrideStore`): as `evaluate`, once a promised client is there.
   * @beta
   */
  async writeOverrides(
    keys: readonly string[],
    states: readonly (PolicyState | null)[],
  ): Promise<void> {
    if (this.#connection.client === undefined && this.#waits) await this.#settled();
    return this.#store.writeOverrides(keys, states);
  }

  /**
   * Each key's override in force (`OverrideStore`): as `evaluate`, once a promised client is there.
   * @beta
   */
  async readOverrides(keys: readonly string[]): Promise<readonly (PolicyState | undefined)[]> {
    if (this.#connection.client === undefined && this.#waits) await this.#settled();
    return this.#store.readOverrides(keys);
  }

  #settled(): Promise<unknown> {
    return this.#connection.pending!.catch(() => {});
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.#clockNow });
  }
}
