import type { RedisStoreOptions } from '@floodgate/core/redis';
import type { Store } from '@floodgate/core/store';
import type { Awaitable } from '../conformance/types.js';

/**
 * How a test wants its client built. A client without such a switch ignores it.
 * @example
 * An adapter's `create` maps the switches onto ioredis options:
 * ```ts
 * import type { RedisClientOptions } from '@floodgate/testkit/redis';
 * import { Redis } from 'ioredis';
 *
 * const create = (url: string, o: RedisClientOptions = {}) =>
 *   new Redis(url, {
 *     lazyConnect: true,
 *     enableAutoPipelining: o.autoPipelining === true,
 *     ...(o.reconnectMs === undefined ? {} : { retryStrategy: () => o.reconnectMs }),
 *   });
 * ```
 * @public
 */
export interface RedisClientOptions {
  /** Batch concurrent commands into pipelines (ioredis `enableAutoPipelining`). */
  autoPipelining?: boolean;
  /** Reconnect this many ms after losing the connection (default: the client's own strategy). */
  reconnectMs?: number;
}

/**
 * `{ host, port }` of a cluster node, as `RedisCluster.startupNodes` lists them.
 * @example
 * ```ts
 * import type { RedisNodeAddress } from '@floodgate/testkit/redis';
 * import { Cluster } from 'ioredis';
 *
 * // An adapter's `createCluster`: a client that connects only when told to.
 * const createCluster = (nodes: readonly RedisNodeAddress[]) => new Cluster([...nodes], { lazyConnect: true });
 * ```
 * @public
 */
export interface RedisNodeAddress {
  host: string;
  port: number;
}

/**
 * What a Redis store package hands the shared suite: how to build its client and its store.
 * One adapter per client generation (`ioredis 5`, `ioredis 6`, `redis 4` ...). `C` is every
 * client type the store takes (single node and cluster).
 * @example
 * A store package's `test/adapters.ts`:
 * ```ts
 * import { type IoRedisClient, IoRedisStore } from '@floodgate/ioredis';
 * import type { RedisStoreAdapter } from '@floodgate/testkit/redis';
 * import { Cluster, Redis } from 'ioredis';
 *
 * export const IOREDIS: RedisStoreAdapter<IoRedisClient> = {
 *   name: 'IoRedisStore with ioredis 5',
 *   create: (url, o) => new Redis(url, { lazyConnect: true, enableAutoPipelining: o?.autoPipelining }).on('error', () => {}),
 *   createCluster: (nodes) => new Cluster([...nodes], { lazyConnect: true }).on('error', () => {}),
 *   connect: (client) => client.connect(),
 *   disconnect: (client) => client.disconnect(),
 *   makeStore: (client, options) => new IoRedisStore(client, options),
 *   command: (client, [name, ...args]) => client.call(name!, args),
 * };
 * ```
 * @public
 */
export interface RedisStoreAdapter<C = unknown> {
  /** Shown in test titles, e.g. `'IoRedisStore with ioredis 5'`. Unique within a package. */
  readonly name: string;
  /**
   * A client for the node at `url`, not connected yet and not connecting by itself. Its `error`
   * events must be handled: the fault tests restart and stop servers under it.
   */
  create(url: string, options?: RedisClientOptions): C;
  /** Connects a client from `create` or `createCluster`; resolves once it takes commands. */
  connect(client: C): Promise<unknown>;
  /** Closes the client; must not throw for a client that is closed or never connected. */
  disconnect(client: C): Awaitable<void>;
  /** The store under test on `client`, options passed through as given (bad ones too). */
  makeStore(client: C, options?: RedisStoreOptions): Store;
  /** Sends one raw command through a single-node client (`PTTL`, `SCAN`, `CLUSTER KEYSLOT`). */
  command(client: C, args: string[]): Promise<unknown>;
  /** A Redis Cluster client, not connected yet. Needed by `redisClusterTests`. */
  createCluster?(nodes: readonly RedisNodeAddress[], options?: RedisClientOptions): C;
  /**
   * True when `RedisClientOptions.autoPipelining` changes how the client sends: the tests whose
   * outcome pipelining could change then run both with and without it. @default false
   */
  readonly autoPipelining?: boolean;
  /**
   * False when the client cannot tell the store that it lost its connection (node-redis 1.x:
   * `isOpen` only, true while it reconnects), so `rejectIfNotReady` cannot fail fast while a
   * server is down: the test of that is then not registered. @default true
   */
  readonly tracksReadiness?: boolean;
  /**
   * False when the client's reply parser does not recover from a connection that dies in the
   * middle of a reply: after it reconnects it hands replies to the wrong commands and throws
   * from its socket handler (node-redis 4, `@node-redis/client` 1). The cut-reply test is then
   * not registered for it. @default true
   */
  readonly survivesCutReplies?: boolean;
  /**
   * False for transports that may run two concurrent commands in either order, such as HTTP
   * (each request on a connection of its own, as `@upstash/redis` sends them): the batching
   * tests that compare decisions call by call with one script run per call, or that expect the
   * lone call to run before the batch sent behind it, are then not registered. Each decision is
   * still atomic and exact; only the order between concurrent calls is not the order they were
   * made in. True for a client that sends every command of one store on one connection.
   * @default true
   */
  readonly ordered?: boolean;
}

/**
 * The assertions the Redis suite uses: all in vitest's and jest's `expect`.
 * @example
 * A helper that takes whichever runner's `expect` the suite was given:
 * ```ts
 * import { allKeysWithTtl, type RedisExpectation, type RedisServer } from '@floodgate/testkit/redis';
 * import { expect } from 'vitest';
 *
 * declare const server: RedisServer;
 * async function expectEveryKeyExpires(expect: (actual: unknown) => RedisExpectation, port: number) {
 *   for (const ttl of (await allKeysWithTtl(port)).values()) expect(ttl).toBeGreaterThan(0);
 * }
 * await expectEveryKeyExpires(expect, server.port);
 * ```
 * @public
 */
export interface RedisExpectation {
  toBe(expected: unknown): void;
  toEqual(expected: unknown): void;
  toBeDefined(): void;
  toBeUndefined(): void;
  toBeGreaterThan(expected: number): void;
  toBeGreaterThanOrEqual(expected: number): void;
  toBeLessThan(expected: number): void;
  toBeLessThanOrEqual(expected: number): void;
  toHaveLength(expected: number): void;
  toMatch(expected: RegExp): void;
  toThrow(expected?: unknown): void;
  toBeInstanceOf(expected: unknown): void;
  readonly not: { toBe(expected: unknown): void };
  readonly rejects: { toMatchObject(expected: object): PromiseLike<unknown> };
}

/**
 * The test framework, passed in by the caller (`import * as vitest from 'vitest'`, or
 * `{ describe, it, expect, beforeAll, afterAll }`), so the testkit never imports a test runner.
 * @example
 * ```ts
 * import type { IoRedisClient } from '@floodgate/ioredis';
 * import { type RedisStoreAdapter, type RedisSuiteApi, redisFaultTests } from '@floodgate/testkit/redis';
 * import { afterAll, beforeAll, describe, expect, it } from 'vitest';
 *
 * declare const IOREDIS: RedisStoreAdapter<IoRedisClient>; // test/adapters.ts
 * const api: RedisSuiteApi = { describe, it, expect, beforeAll, afterAll };
 * redisFaultTests(api, { adapters: [IOREDIS] });
 * ```
 * @public
 */
export interface RedisSuiteApi {
  describe(name: string, fn: () => void): void;
  it(name: string, fn: () => Promise<void>, timeout?: number): void;
  expect(actual: unknown, message?: string): RedisExpectation;
  beforeAll(fn: () => Awaitable<unknown>, timeout?: number): void;
  afterAll(fn: () => Awaitable<unknown>, timeout?: number): void;
}
