import { FloodgateError } from '@floodgate/core';
import { RedisStore, type RedisStoreOptions, type RedisTransport } from '@floodgate/core/redis';
import type { Store } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import type { ChainableCommander, Cluster, Redis } from 'ioredis';
import { ioredisSubscribe } from './subscribe.js';

type Pipeline = ChainableCommander;

/**
 * Options of `IoRedisStore`; see `RedisStoreOptions` in `@floodgate/core/redis` for each default.
 * @example
 * A store that decides on this process's clock (deterministic tests, servers without `TIME`).
 * ```ts
 * import { IoRedisStore, type IoRedisStoreOptions } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const options: IoRedisStoreOptions = { clock: 'client', rejectIfNotReady: true };
 * const store = new IoRedisStore(new Redis(), options);
 * ```
 * @public
 */
export type IoRedisStoreOptions = RedisStoreOptions;

/**
 * An ioredis connection to one Redis node, or an ioredis Cluster.
 * @example
 * Either kind of connection goes to the same store class.
 * ```ts
 * import { type IoRedisClient, IoRedisStore } from '@floodgate/ioredis';
 * import { Cluster, Redis } from 'ioredis';
 *
 * const client: IoRedisClient = process.env.REDIS_CLUSTER
 *   ? new Cluster([{ host: '10.0.0.1', port: 6379 }])
 *   : new Redis();
 * const store = new IoRedisStore(client);
 * ```
 * @public
 */
export type IoRedisClient = Redis | Cluster;

/**
 * The ioredis store (ioredis 5 and 6, `Redis` and `Cluster`): every decision is one `EVALSHA` of
 * Floodgate's limit script, so all processes sharing the Redis server (or Cluster) share exact
 * limits. On `NOSCRIPT` (script cache flushed, restart, failover) it re-sends the script with
 * `EVAL` and the same arguments. It never connects, disconnects or configures the client.
 * Commands go through `client.call`, so auto-pipelining, `keyPrefix` and Cluster routing apply.
 * Once a limiter with a blocked-key cache uses it, it opens one connection of its own, a
 * `duplicate()` (of one node's connection on a Cluster) subscribed to the change feed (the
 * `changes` option): its socket never keeps the process alive, and it closes with the client.
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { Redis } from 'ioredis';
 *
 * const limiter = createLimiter({
 *   store: new IoRedisStore(new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379')),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 * });
 * const d = await limiter.limit('key_123');
 * ```
 * @public
 */
export class IoRedisStore extends RedisStore {
  /** For metrics and traces (`Store.kind`). */
  override readonly kind: string = 'ioredis';

  constructor(client: IoRedisClient, options: IoRedisStoreOptions = {}) {
    super(ioredisTransport(client), options);
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.clockNow });
  }
}

/** How the store reaches Redis through ioredis (or iovalkey, its fork). */
function ioredisTransport(client: IoRedisClient): RedisTransport {
  if (
    typeof client !== 'object' ||
    client === null ||
    typeof (client as Partial<Redis>).call !== 'function'
  ) {
    throw new FloodgateError('INVALID_OPTION', 'IoRedisStore needs an ioredis Redis or Cluster');
  }
  return {
    label: 'ioredis',
    // A single-node connection batches; a Cluster does not (one slot per script).
    canBatch: (client as Partial<Cluster>).isCluster !== true,
    // ioredis finds the keys itself (for Cluster routing and keyPrefix). Only a client that
    // knows other nodes can follow a redirection: a single node's promise is returned as it is,
    // without an async wrapper's promise and hop on every decision.
    send: canRedirect(client)
      ? async (_firstKey, name, args) => {
          try {
            return await client.call(name, args);
          } catch (error) {
            // A Cluster with enableAutoPipelining does not follow ASK or MOVED when the batch the
            // command rode in held other commands that succeeded: follow it here.
            const [reply] = await redirect(client, error, (p) => p.call(name, args), 0);
            if (reply instanceof Error) throw reply;
            return reply;
          }
        }
      : (_firstKey, name, args) => client.call(name, args),
    async sendWithWait(_firstKey, name, args, count, timeoutMs) {
      // One pipeline: one round trip, one connection (on a Cluster, the node owning the keys;
      // the keyless WAIT rides along, and WAIT counts the replicas holding that connection's
      // writes).
      const add = (p: Pipeline) =>
        p.call(name, args).call('WAIT', String(count), String(timeoutMs));
      let [reply, waited] = await exec(client, false, add);
      if (reply instanceof Error) [reply, waited] = await redirect(client, reply, add, 0);
      if (waited instanceof Error) throw waited;
      return [reply, Number(waited)];
    },
    isReady: () => client.status === 'ready',
    subscribe: ioredisSubscribe(client),
    isClosed: () => client.status === 'end',
  };
}

/** Runs `add`'s commands as one pipeline (after ASKING if asked); replies, errors as values. */
async function exec(
  target: Redis | Cluster,
  asking: boolean,
  add: (p: Pipeline) => Pipeline,
): Promise<unknown[]> {
  const pipeline = target.pipeline();
  if (asking) pipeline.call('ASKING');
  const replies = (await add(pipeline).exec()) as [Error | null, unknown][] | null;
  if (replies === null) throw new Error('the pipeline was discarded');
  return replies.slice(asking ? 1 : 0).map(([e, r]) => e ?? r);
}

/**
 * Follows an `ASK` or `MOVED` error to the node it names, up to 5 times; any other error is
 * thrown as is. A pipeline in which another command (WAIT) succeeded is not redirected by
 * ioredis, nor is an auto-pipelined batch that mixed commands.
 */
async function redirect(
  client: IoRedisClient,
  error: unknown,
  add: (p: Pipeline) => Pipeline,
  depth: number,
): Promise<unknown[]> {
  const m = /^(MOVED|ASK) \d+ (.+):(\d+)$/.exec(error instanceof Error ? error.message : '');
  const node = m === null || depth >= 5 ? undefined : nodeAt(client, m[2]!, Number(m[3]));
  if (node === undefined) throw error;
  if (m![1] === 'MOVED') (client as Cluster).refreshSlotsCache();
  const replies = await exec(node, m![1] === 'ASK', add);
  if (replies[0] instanceof Error && /^(MOVED|ASK) /.test(replies[0].message)) {
    return redirect(client, replies[0], add, depth + 1);
  }
  return replies;
}

/** Whether `nodeAt` can find a node: a Cluster's connections (a single node has none). */
function canRedirect(client: IoRedisClient): boolean {
  return typeof (client as Partial<Cluster>).nodes === 'function';
}

/** The connection a Cluster holds to the node at host:port, if it knows that node. */
function nodeAt(client: IoRedisClient, host: string, port: number): Redis | undefined {
  if (!canRedirect(client)) return undefined;
  return (client as Cluster)
    .nodes('all')
    .find((n) => n.options.port === port && n.options.host === host);
}
