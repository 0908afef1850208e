import { createConnection, createServer, type Server, type Socket } from 'node:net';

/**
 * What a `FaultProxy` does to the traffic it carries.
 * @example
 * ```ts
 * import type { FaultProxy, ProxyFault } from '@floodgate/testkit/redis';
 *
 * declare const proxy: FaultProxy;
 * // A blackholed network for two seconds, then healed: what it held is delivered.
 * const fault: ProxyFault = 'stall';
 * proxy.set(fault);
 * await new Promise((resolve) => setTimeout(resolve, 2000));
 * proxy.set('none');
 * ```
 * @beta
 */
export type ProxyFault =
  /** Forward both ways, each chunk after `latencyMs`. */
  | 'none'
  /** Accept connections and read, but deliver nothing either way until healed; then deliver it all. */
  | 'stall'
  /** Cut each connection in the middle of the next reply: half of it arrives, then a reset. */
  | 'drop'
  /** Accept each new connection and reset it at once (existing ones keep working). */
  | 'refuse';

/**
 * Where a fault proxy forwards to, and the latency it starts with.
 * @example
 * ```ts
 * import { type FaultProxyOptions, startFaultProxy, startRedisServer } from '@floodgate/testkit/redis';
 *
 * const server = await startRedisServer();
 * const options: FaultProxyOptions = { target: { host: server.host, port: server.port }, latencyMs: 200 };
 * const proxy = await startFaultProxy(options);
 * ```
 * @beta
 */
export interface FaultProxyOptions {
  /** The server to forward to. */
  target: { host: string; port: number };
  /** Added to every chunk in either direction. @default 0 */
  latencyMs?: number;
}

/**
 * A TCP proxy on a free loopback port between a client and a server, with faults set from the
 * test: latency, a stall (a network that blackholes, then heals and delivers what it held — the
 * case where a server runs a request long after its client gave up), replies cut mid-way, and
 * refused connections. `connections` counts every connection attempt that reached it.
 * @example
 * ```ts
 * import { startFaultProxy, startRedisServer } from '@floodgate/testkit/redis';
 * import { Redis } from 'ioredis';
 *
 * const server = await startRedisServer();
 * const proxy = await startFaultProxy({ target: server });
 * const redis = new Redis(proxy.url); // the client reaches Redis through the proxy
 * proxy.set('stall'); // commands now wait: a limiter's `timeoutMs` answers them
 * proxy.set('none'); // healed: what the stall held is delivered
 * redis.disconnect();
 * await proxy.close();
 * await server.stop();
 * ```
 * @beta
 */
export interface FaultProxy {
  readonly host: string;
  readonly port: number;
  /** `redis://<host>:<port>` */
  readonly url: string;
  /** Connection attempts accepted so far, refused ones included. */
  readonly connections: number;
  /** Connections open through the proxy now. */
  readonly open: number;
  /** Bytes read from clients so far. */
  readonly received: number;
  /** Switches the fault; `'none'` heals (and delivers what a stall held). */
  set(fault: ProxyFault, options?: { latencyMs?: number }): void;
  /** Resets every open connection now (both sides), as a crashed middlebox would. */
  cutAll(): void;
  close(): Promise<void>;
}

/**
 * One direction of a connection: chunks leave in the order they came, each no earlier than its
 * arrival plus the latency then in force, and none while the lane is held (a stall). Order must
 * hold whatever the faults do: a reordered byte stream would be a protocol error, not a fault.
 */
class Lane {
  readonly #queue: { due: number; chunk: Buffer }[] = [];
  #timer: ReturnType<typeof setTimeout> | undefined;
  held = false;

  constructor(readonly to: Socket) {}

  push(chunk: Buffer, latencyMs: number): void {
    this.#queue.push({ due: Date.now() + latencyMs, chunk });
    this.pump();
  }

  pump(): void {
    if (this.#timer !== undefined) return;
    while (!this.held && this.#queue.length > 0) {
      const wait = this.#queue[0]!.due - Date.now();
      if (wait > 0) {
        this.#timer = setTimeout(() => {
          this.#timer = undefined;
          this.pump();
        }, wait);
        return;
      }
      const { chunk } = this.#queue.shift()!;
      if (this.to.writable) this.to.write(chunk);
    }
  }

  clear(): void {
    clearTimeout(this.#timer);
    this.#queue.length = 0;
  }
}

interface Pair {
  client: Socket;
  upstream: Socket;
  up: Lane;
  down: Lane;
}

/**
 * Starts a `FaultProxy` on a free loopback port in front of `options.target`, forwarding
 * faithfully until a fault is set.
 * @example
 * A limiter whose Redis answers 200 ms late decides with its fallback after `timeoutMs`:
 * ```ts
 * import { createLimiter, fixedWindow } from '@floodgate/core';
 * import { IoRedisStore } from '@floodgate/ioredis';
 * import { startFaultProxy, startRedisServer } from '@floodgate/testkit/redis';
 * import { Redis } from 'ioredis';
 *
 * const server = await startRedisServer();
 * const proxy = await startFaultProxy({ target: server, latencyMs: 200 });
 * const store = new IoRedisStore(new Redis(proxy.url));
 * const limiter = createLimiter({ store, policy: fixedWindow({ limit: 5, window: '1h' }), timeoutMs: 50 });
 * const d = await limiter.limit('user-1'); // d.reason === 'store-timeout'
 * ```
 * @beta
 */
export async function startFaultProxy(options: FaultProxyOptions): Promise<FaultProxy> {
  let fault: ProxyFault = 'none';
  let latencyMs = options.latencyMs ?? 0;
  let connections = 0;
  let received = 0;
  const pairs = new Set<Pair>();

  const destroy = (pair: Pair): void => {
    if (!pairs.delete(pair)) return;
    pair.up.clear();
    pair.down.clear();
    pair.client.resetAndDestroy();
    pair.upstream.destroy();
  };

  const server: Server = createServer((client) => {
    connections++;
    if (fault === 'refuse') {
      client.on('error', () => {});
      client.resetAndDestroy();
      return;
    }
    const upstream = createConnection(options.target);
    const pair: Pair = { client, upstream, up: new Lane(upstream), down: new Lane(client) };
    pair.up.held = pair.down.held = fault === 'stall';
    pairs.add(pair);
    client.on('error', () => destroy(pair));
    upstream.on('error', () => destroy(pair));
    client.on('close', () => destroy(pair));
    upstream.on('close', () => destroy(pair));
    client.on('data', (chunk) => {
      received += chunk.length;
      pair.up.push(chunk, latencyMs);
    });
    upstream.on('data', (chunk) => {
      if (fault === 'drop') {
        pair.down.clear();
        client.write(chunk.subarray(0, Math.max(1, chunk.length >> 1)), () => destroy(pair));
        return;
      }
      pair.down.push(chunk, latencyMs);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('proxy has no port');
  const port = address.port;

  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    get connections() {
      return connections;
    },
    get open() {
      return pairs.size;
    },
    get received() {
      return received;
    },
    set(next, o) {
      fault = next;
      if (o?.latencyMs !== undefined) latencyMs = o.latencyMs;
      for (const pair of pairs) {
        for (const lane of [pair.up, pair.down]) {
          lane.held = next === 'stall';
          lane.pump();
        }
      }
    },
    cutAll() {
      for (const pair of [...pairs]) destroy(pair);
    },
    async close() {
      for (const pair of [...pairs]) destroy(pair);
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
