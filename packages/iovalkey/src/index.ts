import { type IoRedisClient, IoRedisStore, type IoRedisStoreOptions } from '@floodgate/ioredis';
import type { Cluster, Valkey } from 'iovalkey';

/**
 * Options of `IoValkeyStore`: those of `IoRedisStore` (see `RedisStoreOptions` in
 * `@floodgate/core/redis` for each default).
 * @example
 * A store that fails at once while the connection is down, so the limiter falls back.
 * ```ts
 * import { IoValkeyStore, type IoValkeyStoreOptions } from '@floodgate/iovalkey';
 * import { Valkey } from 'iovalkey';
 *
 * const options: IoValkeyStoreOptions = { rejectIfNotReady: true };
 * const store = new IoValkeyStore(new Valkey(), options);
 * ```
 * @public
 */
export type IoValkeyStoreOptions = IoRedisStoreOptions;

/**
 * An iovalkey connection to one node (`Valkey`, also exported as `Redis`), or an iovalkey
 * `Cluster`.
 * @example
 * ```ts
 * import { type IoValkeyClient, IoValkeyStore } from '@floodgate/iovalkey';
 * import { Cluster, Valkey } from 'iovalkey';
 *
 * const client: IoValkeyClient = process.env.VALKEY_CLUSTER
 *   ? new Cluster([{ host: '10.0.0.1', port: 6379 }])
 *   : new Valkey();
 * const store = new IoValkeyStore(client);
 * ```
 * @public
 */
export type IoValkeyClient = Valkey | Cluster;

/**
 * `IoRedisStore` for iovalkey 0.4, the Valkey project's fork of ioredis: every decision is one
 * `EVALSHA` of Floodgate's limit script (`EVAL` again after `NOSCRIPT`), batched on a single
 * node, routed by the client on a Cluster. It never connects, disconnects or configures the client.
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { IoValkeyStore } from '@floodgate/iovalkey';
 * import { Valkey } from 'iovalkey';
 *
 * const limiter = createLimiter({
 *   store: new IoValkeyStore(new Valkey(process.env.VALKEY_URL ?? 'redis://127.0.0.1:6379')),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 * const d = await limiter.limit('key_123');
 * ```
 * @public
 */
export class IoValkeyStore extends IoRedisStore {
  /** For metrics and traces (`Store.kind`). */
  override readonly kind: string = 'iovalkey';

  constructor(client: IoValkeyClient, options: IoValkeyStoreOptions = {}) {
    // iovalkey's classes are ioredis's under new names (a fork): the same methods the store calls
    // (call, pipeline, nodes, status), typed apart, so the one implementation serves both. Its
    // own type keeps ioredis users' declarations free of any import of iovalkey.
    super(client as unknown as IoRedisClient, options);
  }
}
