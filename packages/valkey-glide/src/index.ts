import { FloodgateError, RedisScriptStore, type RedisStoreOptions } from '@floodgate/core';
import type { PolicyResult, Store, StoreCall } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import {
  Batch,
  ClusterBatch,
  type GlideClient,
  type GlideClusterClient,
} from '@valkey/valkey-glide';

/**
 * Options of `GlideStore`; see `RedisStoreOptions` in `@floodgate/core` for each default.
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
 */
export type GlideStoreClient = GlideClient | GlideClusterClient;

type Reply = Awaited<ReturnType<GlideClient['customCommand']>>;

/** GLIDE words server errors its own way; the shared machinery looks for Redis's `NOSCRIPT`. */
function serverError(error: unknown): unknown {
  const message = error instanceof Error ? error.message : '';
  if (/NoScriptError|NOSCRIPT/.test(message))
    return new Error(`NOSCRIPT ${message}`, { cause: error });
  return error;
}

interface Queued {
  argv: string[];
  resolve(reply: unknown): void;
  reject(error: unknown): void;
}

const isClient = (c: unknown): c is GlideStoreClient =>
  typeof c === 'object' && c !== null && typeof (c as GlideClient).customCommand === 'function';

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
 */
export class GlideStore extends RedisScriptStore {
  #client: GlideStoreClient | undefined;
  #queue: Queued[] | undefined;
  readonly #pending: Promise<GlideStoreClient> | undefined;
  readonly #waits: boolean;

  constructor(
    client: GlideStoreClient | PromiseLike<GlideStoreClient>,
    options: GlideStoreOptions = {},
  ) {
    super('valkey-glide', options);
    this.#waits = options.rejectIfNotReady !== true;
    if (isClient(client)) {
      this.#client = client;
    } else if (typeof (client as PromiseLike<unknown> | null)?.then === 'function') {
      this.#pending = Promise.resolve(client).then((c) => {
        if (!isClient(c)) throw new Error('the promise did not resolve to a GLIDE client');
        this.#client = c;
        return c;
      });
      this.#pending.catch(() => {}); // reported by each call instead
    } else {
      throw new FloodgateError(
        'INVALID_OPTION',
        'GlideStore needs a GlideClient or GlideClusterClient (or the promise createClient returns)',
      );
    }
  }

  /**
   * As every Redis store's, once a client given as a promise is there (with `rejectIfNotReady`,
   * failing at once until then).
   */
  override async evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    // Whether the store batches depends on the kind of client: know it before the first call.
    if (this.#client === undefined && this.#waits) await this.#pending!.catch(() => {});
    return super.evaluate(call);
  }

  /**
   * As `evaluate`: once a client given as a promise is there, so a reset stays behind the
   * decisions made before it, which wait for the client too (and ahead of those made after it).
   */
  override async reset(keys: readonly string[]): Promise<void> {
    if (this.#client === undefined && this.#waits) await this.#pending!.catch(() => {});
    return super.reset(keys);
  }

  get #cluster(): boolean {
    return typeof (this.#client as Partial<GlideClusterClient>)?.fcallWithRoute === 'function';
  }

  async #connected(): Promise<GlideStoreClient> {
    return this.#client ?? (await this.#pending!);
  }

  protected async send(firstKey: string, name: string, args: string[]): Promise<unknown> {
    const client = await this.#connected();
    try {
      // EVALSHA, EVAL and DEL are routed by GLIDE from their keys; TIME has none: it goes to the
      // node owning firstKey, whose clock the script will read.
      if (name === 'TIME' && this.#cluster) {
        return await (client as GlideClusterClient).customCommand([name], {
          route: { type: 'primarySlotKey', key: firstKey },
        });
      }
      if (this.#cluster) return await client.customCommand([name, ...args]);
    } catch (error) {
      throw serverError(error);
    }
    return this.#ordered(client as GlideClient, [name, ...args]);
  }

  /**
   * GLIDE runs the requests it has in hand concurrently in its core, so two commands sent in one
   * tick may reach the server in either order (a reset overtaking the decision made before it).
   * The commands of one tick go as one non-atomic `Batch` instead: one pipeline, in call order,
   * one round trip, each reply or error to its caller.
   */
  #ordered(client: GlideClient, argv: string[]): Promise<unknown> {
    return new Promise((resolve, reject) => {
      if (this.#queue === undefined) {
        this.#queue = [];
        queueMicrotask(() => this.#flush(client));
      }
      this.#queue.push({ argv, resolve, reject });
    });
  }

  async #flush(client: GlideClient): Promise<void> {
    const queue = this.#queue!;
    this.#queue = undefined;
    if (queue.length === 1) {
      const [{ argv, resolve, reject }] = queue as [Queued];
      return client.customCommand(argv).then(resolve, (e) => reject(serverError(e)));
    }
    const batch = new Batch(false);
    for (const q of queue) batch.customCommand(q.argv);
    try {
      const replies = await client.exec(batch, false);
      if (replies === null) throw new Error('the batch was discarded');
      queue.forEach((q, i) => {
        const reply = replies[i];
        if (reply instanceof Error) q.reject(serverError(reply));
        else q.resolve(reply);
      });
    } catch (error) {
      for (const q of queue) q.reject(serverError(error));
    }
  }

  protected async sendWithWait(
    firstKey: string,
    name: string,
    args: string[],
    count: number,
    timeoutMs: number,
  ): Promise<[unknown, number]> {
    // One GLIDE batch, not atomic (a pipeline): one round trip on one connection, so WAIT counts
    // the replicas holding the script's writes. On a cluster it is routed whole to the primary
    // owning firstKey (WAIT has no key of its own to route by).
    const client = await this.#connected();
    const wait = ['WAIT', String(count), String(timeoutMs)];
    let replies: Reply[] | null;
    try {
      replies = this.#cluster
        ? await (client as GlideClusterClient).exec(
            new ClusterBatch(false).customCommand([name, ...args]).customCommand(wait),
            false,
            { route: { type: 'primarySlotKey', key: firstKey } },
          )
        : await (client as GlideClient).exec(
            new Batch(false).customCommand([name, ...args]).customCommand(wait),
            false,
          );
    } catch (error) {
      throw serverError(error);
    }
    if (replies === null) throw new Error('the batch was discarded');
    const [reply, waited] = replies;
    if (waited instanceof Error) throw waited;
    return [reply instanceof Error ? serverError(reply) : reply, Number(waited)];
  }

  /** A single-node client batches; a cluster does not (one slot per script). */
  protected canBatch(): boolean {
    return !this.#cluster;
  }

  /** Connected and not closed (GLIDE reconnects on its own; it has no other state to read). */
  protected isReady(): boolean {
    const client = this.#client as unknown as { isClosed?: boolean } | undefined;
    return client !== undefined && client.isClosed !== true;
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.clockNow });
  }
}
