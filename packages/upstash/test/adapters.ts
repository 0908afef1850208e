// How the shared Redis suites (@floodgate/testkit) build UpstashStores: a real @upstash/redis
// client, over HTTP, to a bridge (the testkit's) in front of the suite's throw-away redis-server.
// The suites hand a redis:// URL to `create`; the bridge for it starts in `connect`, and goes in
// `disconnect`, so "the client is closed" means the REST endpoint is gone.
import {
  type RedisHttpBridge,
  type RedisStoreAdapter,
  startRedisHttpBridge,
} from '@floodgate/testkit/redis';
import { Redis } from '@upstash/redis';
import { UpstashStore } from '../src/index.js';

/** A redis-server address, then (once connected) its bridge and a client of the bridge. */
export interface BridgedClient {
  readonly host: string;
  readonly port: number;
  bridge?: RedisHttpBridge;
  redis?: Redis;
}

/** How a client is configured: the settings `@upstash/redis` users choose between. */
interface ClientConfig {
  responseEncoding: 'base64' | false;
  enableAutoPipelining: boolean;
  automaticDeserialization: boolean;
}

function adapter(name: string, config: ClientConfig): RedisStoreAdapter<BridgedClient> {
  return {
    name,
    // Each request travels on an HTTP connection of its own: two in flight at once (the lone call
    // and the batch sent behind it, say) may run in either order, on the real service as on the
    // bridge (batch-order.test.ts checks what those tests check, without an order).
    ordered: false,
    create: (url) => {
      const u = new URL(url);
      return { host: u.hostname, port: Number(u.port) };
    },
    async connect(client) {
      client.bridge ??= await startRedisHttpBridge({ host: client.host, port: client.port });
      client.redis ??= new Redis({
        url: client.bridge.url,
        token: client.bridge.token,
        // One attempt, as the README recommends: the limiter bounds each call and falls back, and
        // a script sent again after a lost reply could be charged twice.
        retry: { retries: 0 },
        enableTelemetry: false,
        ...config,
      });
    },
    disconnect: async (client) => {
      await client.bridge?.close();
    },
    makeStore: (client, options) => new UpstashStore(client.redis as Redis, options),
    // PTTL and SCAN for the inspector, through the client and the bridge as well.
    command: async (client, args) => {
      const reply = await client.redis!.exec(args as [string, ...string[]]);
      // With automaticDeserialization a numeric reply string came back as a number.
      return Array.isArray(reply)
        ? reply.map((r) => (typeof r === 'number' ? String(r) : r))
        : reply;
    },
  };
}

/** `@upstash/redis` as it comes: base64 responses, auto-pipelining on (the store bypasses it). */
export const UPSTASH = adapter('UpstashStore (base64 responses)', {
  responseEncoding: 'base64',
  enableAutoPipelining: true,
  automaticDeserialization: false,
});

/** Plain JSON responses, no auto-pipelining, the client's JSON deserialization left on. */
export const UPSTASH_JSON = adapter('UpstashStore (JSON responses)', {
  responseEncoding: false,
  enableAutoPipelining: false,
  automaticDeserialization: true,
});
