// How the shared Redis suite (@floodgate/testkit) builds iovalkey clients and IoValkeyStores.
import type { RedisClientOptions, RedisStoreAdapter } from '@floodgate/testkit/redis';
import { Cluster, Valkey } from 'iovalkey';
import { type IoValkeyClient, IoValkeyStore } from '../src/index.js';

const quiet = <C extends IoValkeyClient>(client: C): C => {
  client.on('error', () => {}); // reconnects are expected in the fault tests
  return client;
};

export const IOVALKEY: RedisStoreAdapter<IoValkeyClient> = {
  name: 'IoValkeyStore with iovalkey 0.4',
  autoPipelining: true,
  create: (url, o: RedisClientOptions = {}) =>
    quiet(
      new Valkey(url, {
        lazyConnect: true,
        enableAutoPipelining: o.autoPipelining === true,
        ...(o.reconnectMs === undefined ? {} : { retryStrategy: () => o.reconnectMs }),
      }),
    ),
  createCluster: (nodes, o) =>
    quiet(new Cluster([...nodes], { lazyConnect: true, enableAutoPipelining: o?.autoPipelining })),
  connect: (client) => client.connect(),
  disconnect: (client) => client.disconnect(),
  makeStore: (client, options) => new IoValkeyStore(client, options),
  command: (client, [name, ...args]) => client.call(name!, args),
};
export const ADAPTERS = [IOVALKEY];
