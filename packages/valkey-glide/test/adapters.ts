// How the shared Redis suite (@floodgate/testkit) builds GLIDE clients and GlideStores. GLIDE
// connects inside createClient, while the suite wants a client made first and connected later:
// a handle holds the promise the store is given, and `connect` creates the real client.
import type {
  RedisClientOptions,
  RedisNodeAddress,
  RedisStoreAdapter,
} from '@floodgate/testkit/redis';
import { GlideClient, GlideClusterClient, Logger } from '@valkey/valkey-glide';
import { GlideStore, type GlideStoreClient } from '../src/index.js';

export interface GlideHandle {
  readonly ready: Promise<GlideStoreClient>;
  open(): Promise<GlideStoreClient>;
  client?: GlideStoreClient;
}

// GLIDE logs every error reply (NOSCRIPT, which the store answers) as a warning.
Logger.setLoggerConfig('error');

// Generous: a busy 2-core CI machine; no test relies on GLIDE's own timeout.
const requestTimeout = 10_000;

function handle(create: () => Promise<GlideStoreClient>): GlideHandle {
  let settle!: (c: GlideStoreClient) => void;
  const h: GlideHandle = {
    ready: new Promise((resolve) => {
      settle = resolve;
    }),
    // The store's own `then` on `ready` runs before the caller of `open` resumes.
    open: () =>
      create().then((c) => {
        h.client = c;
        settle(c);
        return c;
      }),
  };
  h.ready.catch(() => {});
  return h;
}

const backoff = (o: RedisClientOptions) =>
  o.reconnectMs === undefined
    ? {}
    : { connectionBackoff: { numberOfRetries: 1, factor: o.reconnectMs, exponentBase: 1 } };

export const GLIDE: RedisStoreAdapter<GlideHandle> = {
  name: 'GlideStore with valkey-glide 2',
  create: (url, o = {}) => {
    const { hostname, port } = new URL(url);
    const addresses = [{ host: hostname, port: Number(port) }];
    return handle(() => GlideClient.createClient({ addresses, requestTimeout, ...backoff(o) }));
  },
  createCluster: (nodes: readonly RedisNodeAddress[], o = {}) =>
    handle(() =>
      GlideClusterClient.createClient({
        addresses: nodes.map(({ host, port }) => ({ host, port })),
        requestTimeout,
        ...backoff(o),
      }),
    ),
  connect: (h) => h.open(),
  disconnect: (h) => h.client?.close(),
  makeStore: (h, options) => new GlideStore(h.client ?? h.ready, options),
  command: async (h, args) => (await h.ready).customCommand(args),
};
export const ADAPTERS = [GLIDE];
