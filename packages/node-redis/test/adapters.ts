// How the shared Redis suite (@floodgate/testkit) builds node-redis clients and NodeRedisStores:
// one adapter per node-redis generation the store supports, each client created the way that
// generation's docs say.
import { createRequire } from 'node:module';
import type {
  RedisClientOptions,
  RedisNodeAddress,
  RedisStoreAdapter,
} from '@floodgate/testkit/redis';
import { type NodeRedisClient, type NodeRedisClientLike, NodeRedisStore } from '../src/index.js';

/** What every generation's `createClient` / `createCluster` returns, as far as the tests go. */
interface Client {
  connect(): Promise<unknown>;
  disconnect(): Promise<void>;
  on(event: 'error', fn: (e: unknown) => void): unknown;
}

interface Generation {
  createClient(options: { url: string; socket?: object }): unknown;
  createCluster(options: { rootNodes: { url: string }[] }): unknown;
}

const strategy = (o?: RedisClientOptions) =>
  o?.reconnectMs === undefined ? {} : { reconnectStrategy: () => o.reconnectMs };

// node-redis connects only on connect(): create and connect are two steps for every generation.
function adapter(
  name: string,
  load: () => Generation,
  more: Partial<RedisStoreAdapter<NodeRedisClient>> = {},
): RedisStoreAdapter<NodeRedisClient> {
  const quiet = (client: unknown): NodeRedisClient => {
    (client as Client).on('error', () => {}); // reconnects are expected in the fault tests
    return client as NodeRedisClient;
  };
  return {
    name,
    create: (url, o) => quiet(load().createClient({ url, socket: strategy(o) })),
    createCluster: (nodes: readonly RedisNodeAddress[]) =>
      quiet(
        load().createCluster({
          rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
        }),
      ),
    connect: (client) => (client as unknown as Client).connect(),
    disconnect: async (client) => {
      try {
        await (client as unknown as Client).disconnect(); // redis 5 throws at once when closed
      } catch {}
    },
    makeStore: (client, options) => new NodeRedisStore(client, options),
    command: (client, args) => (client as NodeRedisClientLike).sendCommand(args),
    ...more,
  };
}

// Loaded on first use (require caches it): a worker process loads only its own generation.
const require = createRequire(import.meta.url);
const load = (pkg: string) => (): Generation => require(pkg) as Generation;

export const REDIS_6 = adapter('NodeRedisStore with redis 6', load('redis'));
export const REDIS_5 = adapter('NodeRedisStore with redis 5', load('redis5'));
// Its reply parser keeps a half-read reply across a reconnect: after a connection cut mid-reply
// it answers commands with other commands' replies (see survivesCutReplies).
export const REDIS_4 = adapter('NodeRedisStore with redis 4', load('redis4'), {
  survivesCutReplies: false,
});
// Its client has `isOpen` only, and that stays true while it reconnects: a store cannot see that
// the server is gone, so `rejectIfNotReady` fails fast only before the first connect.
export const NODE_REDIS_1 = adapter(
  'NodeRedisStore with @node-redis/client 1',
  load('@node-redis/client'),
  { tracksReadiness: false, survivesCutReplies: false },
);

/** A fleet mid-upgrade: every generation, newest first. */
export const ADAPTERS = [REDIS_6, REDIS_5, REDIS_4, NODE_REDIS_1];
