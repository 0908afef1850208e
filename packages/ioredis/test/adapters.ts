// How the shared Redis suite (@floodgate/testkit) builds ioredis clients and IoRedisStores: one
// adapter per ioredis major the store supports.
import type { RedisClientOptions, RedisStoreAdapter } from '@floodgate/testkit/redis';
import { Cluster, Redis } from 'ioredis';
import { Cluster as Cluster6, Redis as Redis6 } from 'ioredis6';
import { type IoRedisClient, IoRedisStore } from '../src/index.js';

const clientOptions = (o: RedisClientOptions = {}) => ({
  lazyConnect: true,
  enableAutoPipelining: o.autoPipelining === true,
  ...(o.reconnectMs === undefined ? {} : { retryStrategy: () => o.reconnectMs }),
});

const quiet = <C extends { on(event: 'error', fn: () => void): unknown }>(client: C): C => {
  client.on('error', () => {}); // reconnects are expected in the fault tests
  return client;
};

function adapter(
  name: string,
  RedisClass: new (url: string, options: object) => IoRedisClient,
  ClusterClass: new (nodes: { host: string; port: number }[], options: object) => IoRedisClient,
): RedisStoreAdapter<IoRedisClient> {
  return {
    name,
    autoPipelining: true,
    create: (url, o) => quiet(new RedisClass(url, clientOptions(o))),
    createCluster: (nodes, o) =>
      quiet(
        new ClusterClass([...nodes], {
          lazyConnect: true,
          enableAutoPipelining: o?.autoPipelining,
        }),
      ),
    connect: (client) => client.connect(),
    disconnect: (client) => client.disconnect(),
    makeStore: (client, options) => new IoRedisStore(client, options),
    command: (client, [name, ...args]) => client.call(name!, args),
  };
}

export const IOREDIS_5 = adapter('IoRedisStore with ioredis 5', Redis, Cluster);
export const IOREDIS_6 = adapter(
  'IoRedisStore with ioredis 6',
  Redis6 as unknown as typeof Redis,
  Cluster6 as unknown as typeof Cluster,
);
export const ADAPTERS = [IOREDIS_5, IOREDIS_6];
