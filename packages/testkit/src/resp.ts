// A minimal RESP2 client for the launchers and tests: PING, INFO, CLUSTER … on a server the
// testkit started, without making any Redis client library a runtime dependency of the testkit.
import { Socket } from 'node:net';

const HOST = '127.0.0.1';

function encodeCommand(args: readonly (string | number)[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = Buffer.from(String(a));
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

/**
 * A RESP2 reply: strings, integers, null, arrays; an error reply is an Error value.
 * @example
 * ```ts
 * import { redisCommands, type RespReply } from '@floodgate/testkit/redis';
 *
 * declare const port: number; // a server from startRedisServer
 * const replies: RespReply[] = await redisCommands(port, [['GET', 'missing'], ['NOSUCHCOMMAND']]);
 * // [null, Error('ERR unknown command ...')]: an error reply is a value, not a rejection
 * const failed = replies.filter((r) => r instanceof Error);
 * ```
 * @public
 */
export type RespReply = string | number | null | Error | RespReply[];

// Parses one reply from `buf` at `at`; undefined when the buffer does not hold all of it yet.
function parseReply(buf: Buffer, at: number): [RespReply, number] | undefined {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const type = String.fromCharCode(buf[at]!);
  const line = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  switch (type) {
    case '+':
      return [line, next];
    case '-':
      return [new Error(line), next];
    case ':':
      return [Number(line), next];
    case '$': {
      const n = Number(line);
      if (n < 0) return [null, next];
      if (buf.length < next + n + 2) return undefined;
      return [buf.toString('utf8', next, next + n), next + n + 2];
    }
    case '*': {
      const n = Number(line);
      if (n < 0) return [null, next];
      const items: RespReply[] = [];
      let pos = next;
      for (let i = 0; i < n; i++) {
        const r = parseReply(buf, pos);
        if (r === undefined) return undefined;
        items.push(r[0]);
        pos = r[1];
      }
      return [items, pos];
    }
    default:
      throw new Error(`unexpected RESP reply type ${JSON.stringify(type)}`);
  }
}

/**
 * Sends commands to a Redis server over one short-lived connection and resolves with their
 * replies, in order (error replies are returned as Error values, not thrown). For test setup:
 * no client library needed.
 * @example
 * ```ts
 * import { type RedisServer, redisCommands } from '@floodgate/testkit/redis';
 *
 * declare const server: RedisServer;
 * const [pong, info] = await redisCommands(server.port, [['PING'], ['INFO', 'server']], { timeoutMs: 1000 });
 * const version = /redis_version:(\S+)/.exec(String(info))?.[1];
 * ```
 * @public
 */
export function redisCommands(
  port: number,
  commands: readonly (readonly (string | number)[])[],
  options: { host?: string; timeoutMs?: number } = {},
): Promise<RespReply[]> {
  const host = options.host ?? HOST;
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let buf = Buffer.alloc(0);
    const replies: RespReply[] = [];
    const fail = (error: Error): void => {
      socket.destroy();
      reject(error);
    };
    socket.setTimeout(options.timeoutMs ?? 5000, () =>
      fail(new Error(`redis at ${host}:${port} did not answer in time`)),
    );
    socket.once('error', fail);
    // A reset can surface as a plain close: without this the caller would wait for the timeout.
    socket.once('close', () => fail(new Error(`redis at ${host}:${port} closed the connection`)));
    socket.on('data', (chunk) => {
      buf = Buffer.concat([buf, chunk]);
      let at = 0;
      for (;;) {
        let r: [RespReply, number] | undefined;
        try {
          r = parseReply(buf, at);
        } catch (error) {
          fail(error as Error);
          return;
        }
        if (r === undefined) break;
        replies.push(r[0]);
        at = r[1];
      }
      buf = buf.subarray(at);
      if (replies.length === commands.length) {
        socket.destroy();
        resolve(replies);
      }
    });
    socket.connect(port, host, () => {
      socket.write(Buffer.concat(commands.map(encodeCommand)));
    });
  });
}

/**
 * Sends one command over a short-lived connection; an error reply rejects.
 * @example
 * ```ts
 * import { redisCommand, startRedisServer } from '@floodgate/testkit/redis';
 *
 * const server = await startRedisServer();
 * await redisCommand(server.port, ['SET', 'k', 'v', 'PX', 60_000]);
 * const ttlMs = Number(await redisCommand(server.port, ['PTTL', 'k']));
 * await server.stop();
 * ```
 * @public
 */
export async function redisCommand(
  port: number,
  args: readonly (string | number)[],
  options: { host?: string; timeoutMs?: number } = {},
): Promise<RespReply> {
  const [reply] = await redisCommands(port, [args], options);
  if (reply instanceof Error) throw reply;
  return reply as RespReply;
}
