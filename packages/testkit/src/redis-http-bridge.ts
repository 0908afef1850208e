import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { commandOf, itemJson } from './redis-http-bridge-codec.js';
import { type Reply, RespPool } from './redis-http-bridge-resp.js';
import { type Prepared, ScriptShas } from './redis-http-bridge-scripts.js';

/**
 * Which redis-server a bridge forwards to, and what it asks of its clients.
 * @example
 * ```ts
 * import { type RedisHttpBridgeOptions, startRedisHttpBridge, startRedisServer } from '@floodgate/testkit/redis';
 *
 * const server = await startRedisServer();
 * const options: RedisHttpBridgeOptions = { port: server.port, token: 'test-token', connections: 2 };
 * const bridge = await startRedisHttpBridge(options);
 * ```
 * @beta
 */
export interface RedisHttpBridgeOptions {
  /** The port of the redis-server to forward to (one the testkit started). */
  port: number;
  /** That server's host. @default '127.0.0.1' */
  host?: string;
  /** The bearer token a request must carry (`Authorization: Bearer …` or `?_token=`). @default random */
  token?: string;
  /** RESP connections to redis-server the requests are spread over. @default 4 */
  connections?: number;
  /**
   * The loopback port to listen on, e.g. a closed bridge's, to bring its URL back.
   * @default a free port
   */
  httpPort?: number;
}

/**
 * HTTP requests a bridge has answered, by endpoint.
 * @example
 * ```ts
 * import type { RedisHttpBridge, RedisHttpBridgeRequests } from '@floodgate/testkit/redis';
 *
 * declare const bridge: RedisHttpBridge;
 * const before: RedisHttpBridgeRequests = bridge.requests;
 * // … decisions …
 * const roundTrips = bridge.requests.command - before.command;
 * ```
 * @beta
 */
export interface RedisHttpBridgeRequests {
  /** `POST /`: one command. */
  readonly command: number;
  /** `POST /pipeline`. */
  readonly pipeline: number;
  /** `POST /multi-exec`. */
  readonly multiExec: number;
  /** Refused with 401 (no token, or a wrong one). */
  readonly unauthorized: number;
}

/**
 * A running bridge: the URL and token to give `new Redis({ url, token })` of `@upstash/redis`.
 * @example
 * ```ts
 * import { type RedisHttpBridge, startRedisHttpBridge } from '@floodgate/testkit/redis';
 * import { Redis } from '@upstash/redis';
 *
 * declare const redisPort: number;
 * const bridge: RedisHttpBridge = await startRedisHttpBridge({ port: redisPort });
 * const redis = new Redis({ url: bridge.url, token: bridge.token });
 * await bridge.close();
 * ```
 * @beta
 */
export interface RedisHttpBridge {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** The bearer token every request must carry. */
  readonly token: string;
  /** The loopback port it listens on. */
  readonly port: number;
  /** A snapshot of the requests answered so far. */
  readonly requests: RedisHttpBridgeRequests;
  /** Stops listening, drops every HTTP connection (requests in flight fail) and the RESP ones. */
  close(): Promise<void>;
}

/** What a handler answers: an HTTP status and a JSON body. */
type Answer = [status: number, json: string];

const error = (status: number, message: string): Answer => [
  status,
  JSON.stringify({ error: message }),
];
const MAX_BODY = 64 * 1024 * 1024;

/** A transaction redis-server discarded as a whole (EXECABORT): one `{ error }`, status 400. */
class Discarded extends Error {}

/**
 * Starts an HTTP server on a free loopback port that speaks Upstash's REST protocol as
 * `@upstash/redis` uses it, in front of a real redis-server: `POST /` with one command as a JSON
 * array (`{ result }`, or `{ error }` with status 400), `POST /pipeline` (an array of commands, run
 * in order on one connection but not atomically; status 200 with one `{ result }` or `{ error }`
 * per command), `POST /multi-exec` (the same, atomically as MULTI … EXEC; a command that cannot be
 * queued discards the whole with one `{ error }`, status 400). A bearer token is required (401
 * otherwise); `Upstash-Encoding: base64` base64-encodes every string of the result except `OK`;
 * each response carries an `Upstash-Sync-Token`. Separate requests may run in either order, as
 * on the real service. Not implemented: path-style commands (`/set/foo/bar`), the SSE endpoints
 * (`/subscribe`, `/monitor`), read-only tokens, request limits; connection-state commands
 * (SELECT, WATCH, MULTI …) are refused.
 * @example
 * ```ts
 * import { startRedisHttpBridge, startRedisServer } from '@floodgate/testkit/redis';
 * import { Redis } from '@upstash/redis';
 *
 * const server = await startRedisServer();
 * const bridge = await startRedisHttpBridge({ port: server.port });
 * const redis = new Redis({ url: bridge.url, token: bridge.token });
 * await redis.set('greeting', 'hello');
 * console.log(await redis.get('greeting')); // 'hello'
 * await bridge.close();
 * await server.stop();
 * ```
 * @beta
 */
export async function startRedisHttpBridge(
  options: RedisHttpBridgeOptions,
): Promise<RedisHttpBridge> {
  const token = options.token ?? randomBytes(16).toString('hex');
  const pool = new RespPool(options.host ?? '127.0.0.1', options.port, options.connections ?? 4);
  const scripts = new ScriptShas();
  const counts = { command: 0, pipeline: 0, multiExec: 0, unauthorized: 0 };
  let syncToken = 0;

  /** Runs commands as one group on one connection; each reply as the client must see it. */
  async function run(prepared: readonly Prepared[], wrap = false): Promise<Reply[]> {
    const args = prepared.map((p) => p.args);
    const replies = await pool.send(wrap ? [['MULTI'], ...args, ['EXEC']] : args);
    if (!wrap) return replies.map((r, i) => prepared[i]!.reply?.(r) ?? r);
    const exec = replies[replies.length - 1]!;
    if (!Array.isArray(exec)) {
      // EXECABORT: a command could not be queued. Its own error says which, and why.
      const queued = replies.slice(1, -1).find((r): r is Error => r instanceof Error);
      const reason = queued ?? (exec instanceof Error ? exec : undefined);
      throw new Discarded(reason?.message ?? 'ERR transaction aborted');
    }
    return exec.map((r, i) => prepared[i]!.reply?.(r) ?? r);
  }

  async function answer(path: string, body: unknown, base64: boolean): Promise<Answer> {
    if (path === '/') {
      counts.command++;
      const command = commandOf(body);
      if (!Array.isArray(command)) return error(400, command.error);
      const [reply] = await run([scripts.prepare(command)]);
      return [reply instanceof Error ? 400 : 200, itemJson(reply!, base64)];
    }
    if (path !== '/pipeline' && path !== '/multi-exec') {
      return error(
        400,
        `ERR the bridge does not serve ${path}: path-style commands and SSE are not implemented`,
      );
    }
    const atomic = path === '/multi-exec';
    if (atomic) counts.multiExec++;
    else counts.pipeline++;
    if (!Array.isArray(body) || body.length === 0) {
      return error(400, 'ERR the request body must be a non-empty array of commands');
    }
    const commands = body.map(commandOf);
    const refused = commands.find((c) => !Array.isArray(c)) as { error: string } | undefined;
    if (atomic && refused !== undefined) return error(400, refused.error);
    const runnable = commands.filter((c): c is string[] => Array.isArray(c));
    let replies: Reply[] = [];
    if (runnable.length > 0) {
      try {
        replies = await run(
          runnable.map((c) => scripts.prepare(c)),
          atomic,
        );
      } catch (e) {
        if (!(e instanceof Discarded)) throw e;
        return error(400, e.message);
      }
    }
    let next = 0;
    const items = commands.map((c) =>
      Array.isArray(c) ? itemJson(replies[next++]!, base64) : JSON.stringify(c),
    );
    return [200, `[${items.join(',')}]`];
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    let status: number;
    let json: string;
    const url = new URL(req.url ?? '/', 'http://bridge');
    const bearer = /^Bearer (.*)$/i.exec(req.headers.authorization ?? '')?.[1];
    if (req.method !== 'POST') {
      [status, json] = error(405, 'Method Not Allowed');
    } else if ((bearer ?? url.searchParams.get('_token')) !== token) {
      counts.unauthorized++;
      [status, json] = error(401, 'WRONGPASS invalid or missing auth token');
    } else {
      const base64 = String(req.headers['upstash-encoding']).toLowerCase() === 'base64';
      try {
        const body = await readJson(req);
        [status, json] =
          body === undefined
            ? error(400, 'ERR the request body is not JSON, or is over 64 MiB')
            : await answer(url.pathname.replace(/\/+$/, '') || '/', body, base64);
      } catch (e) {
        // redis-server is unreachable, or a connection died under the request: whether its
        // commands ran is unknown, as for any client.
        [status, json] = error(
          500,
          `ERR the bridge could not reach redis-server: ${(e as Error).message}`,
        );
      }
    }
    res.writeHead(status, {
      'content-type': 'application/json',
      'upstash-sync-token': String(++syncToken),
    });
    res.end(json);
  }

  const server = createServer((req, res) => {
    handle(req, res).catch(() => res.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.httpPort ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    token,
    port,
    get requests() {
      return { ...counts };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
        pool.close();
      }),
  };
}

/** The request body parsed as JSON, or undefined when it is not JSON. */
async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) return undefined;
    chunks.push(chunk as Buffer);
  }
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    return undefined;
  }
}
