// Every node-redis generation the store supports, created the way each one's docs say. Loaded
// on demand, so a worker process pays only for the one it uses.
import type { NodeRedisClientLike, NodeRedisClusterLike } from '../src/index.js';

export interface Connected<C> {
  client: C;
  close(): Promise<void>;
}

interface Closable {
  disconnect(): Promise<void>;
  on(event: 'error', fn: (e: unknown) => void): unknown;
}

async function open<C extends Closable>(
  client: C,
  connect: () => Promise<unknown>,
): Promise<Connected<C>> {
  client.on('error', () => {}); // reconnects are expected in the fault tests
  await connect();
  return {
    client,
    close: async () => {
      await client.disconnect().catch(() => {});
    },
  };
}

export interface ClientKind {
  name: string;
  client(url: string, options?: { reconnectMs?: number }): Promise<Connected<NodeRedisClientLike>>;
  cluster(
    nodes: readonly { host: string; port: number }[],
  ): Promise<Connected<NodeRedisClusterLike>>;
}

const strategy = (ms?: number) => (ms === undefined ? {} : { reconnectStrategy: () => ms });

export const CLIENT_KINDS: ClientKind[] = [
  {
    name: 'redis 6',
    client: async (url, o) => {
      const { createClient } = await import('redis');
      const c = createClient({ url, socket: strategy(o?.reconnectMs) });
      return open(c, () => c.connect());
    },
    cluster: async (nodes) => {
      const { createCluster } = await import('redis');
      const c = createCluster({
        rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
      });
      return open(c, () => c.connect());
    },
  },
  {
    name: 'redis 5',
    client: async (url, o) => {
      const { createClient } = await import('redis5');
      const c = createClient({ url, socket: strategy(o?.reconnectMs) });
      return open(c, () => c.connect());
    },
    cluster: async (nodes) => {
      const { createCluster } = await import('redis5');
      const c = createCluster({
        rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
      });
      return open(c, () => c.connect());
    },
  },
  {
    name: 'redis 4',
    client: async (url, o) => {
      const { createClient } = await import('redis4');
      const c = createClient({ url, socket: strategy(o?.reconnectMs) });
      return open(c, () => c.connect());
    },
    cluster: async (nodes) => {
      const { createCluster } = await import('redis4');
      const c = createCluster({
        rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
      });
      return open(c, () => c.connect());
    },
  },
  {
    name: '@node-redis/client 1',
    client: async (url, o) => {
      const { createClient } = await import('@node-redis/client');
      const c = createClient({ url, socket: strategy(o?.reconnectMs) });
      return open(c, () => c.connect());
    },
    cluster: async (nodes) => {
      const { createCluster } = await import('@node-redis/client');
      const c = createCluster({
        rootNodes: nodes.map((n) => ({ url: `redis://${n.host}:${n.port}` })),
      });
      return open(c, () => c.connect());
    },
  },
];
