// The Redis side of the HTTP bridge: RESP2 over a few long-lived connections, replies kept as the
// server sent them (a bulk string as its bytes, an integer as its digits, a status apart from a
// bulk string) because the REST protocol encodes each of them differently.
import { Socket } from 'node:net';

/** A RESP simple string (`+OK`): the REST API leaves `OK` unencoded in base64 mode. @internal */
export class RespStatus {
  constructor(readonly text: string) {}
}

/** A RESP integer, as its digits: JSON gets them verbatim, past 2^53 too. @internal */
export class RespInteger {
  constructor(readonly digits: string) {}
}

/** A reply as parsed: a bulk string is a Buffer, nil is null, an error reply an Error value. @internal */
export type Reply = RespStatus | RespInteger | Buffer | null | Error | Reply[];

/** One reply from `buf` at `at`, and where the next starts; undefined while incomplete. */
function parse(buf: Buffer, at: number): [Reply, number] | undefined {
  const eol = buf.indexOf('\r\n', at);
  if (eol < 0) return undefined;
  const line = buf.toString('utf8', at + 1, eol);
  const next = eol + 2;
  switch (buf[at]) {
    case 0x2b: // '+'
      return [new RespStatus(line), next];
    case 0x2d: // '-'
      return [new Error(line), next];
    case 0x3a: // ':'
      return [new RespInteger(line), next];
    case 0x24: {
      // '$'
      const n = Number(line);
      if (n < 0) return [null, next];
      if (buf.length < next + n + 2) return undefined;
      return [Buffer.from(buf.subarray(next, next + n)), next + n + 2];
    }
    case 0x2a: {
      // '*'
      const n = Number(line);
      if (n < 0) return [null, next];
      const items: Reply[] = [];
      let pos = next;
      for (let i = 0; i < n; i++) {
        const r = parse(buf, pos);
        if (r === undefined) return undefined;
        items.push(r[0]);
        pos = r[1];
      }
      return [items, pos];
    }
    default:
      throw new Error(`unexpected RESP reply type byte ${buf[at]}`);
  }
}

/** `args` as one RESP command (an array of bulk strings). @internal */
export function encodeCommand(args: readonly string[]): Buffer {
  const parts: Buffer[] = [Buffer.from(`*${args.length}\r\n`)];
  for (const a of args) {
    const b = Buffer.from(a, 'utf8');
    parts.push(Buffer.from(`$${b.length}\r\n`), b, Buffer.from('\r\n'));
  }
  return Buffer.concat(parts);
}

interface Waiter {
  readonly count: number;
  readonly replies: Reply[];
  resolve(replies: Reply[]): void;
  reject(error: Error): void;
}

/**
 * One connection to redis-server. `send` writes a group of commands in one write and resolves
 * with their replies: nothing of another group can come between them on this connection, which
 * is what makes a MULTI … EXEC group atomic. A connection that fails rejects every group in
 * flight (whether those commands ran is unknown, as for any client) and is not used again.
 */
class RespConnection {
  readonly #socket: Socket;
  readonly #waiting: Waiter[] = [];
  #buf: Buffer = Buffer.alloc(0);
  #dead: Error | undefined;

  constructor(host: string, port: number) {
    this.#socket = new Socket();
    this.#socket.setNoDelay(true);
    this.#socket.on('data', (chunk) => this.#read(chunk));
    this.#socket.on('error', (error) => this.#fail(error));
    this.#socket.on('close', () => this.#fail(new Error(`redis at ${host}:${port} closed`)));
    this.#socket.connect(port, host);
  }

  get alive(): boolean {
    return this.#dead === undefined;
  }

  /** Groups sent and not yet answered. */
  get pending(): number {
    return this.#waiting.length;
  }

  send(commands: readonly (readonly string[])[]): Promise<Reply[]> {
    if (this.#dead !== undefined) return Promise.reject(this.#dead);
    return new Promise((resolve, reject) => {
      this.#waiting.push({ count: commands.length, replies: [], resolve, reject });
      this.#socket.write(Buffer.concat(commands.map(encodeCommand)));
    });
  }

  #read(chunk: Buffer): void {
    this.#buf = this.#buf.length === 0 ? chunk : Buffer.concat([this.#buf, chunk]);
    let at = 0;
    try {
      for (;;) {
        const r = parse(this.#buf, at);
        if (r === undefined) break;
        at = r[1];
        const head = this.#waiting[0];
        if (head === undefined) throw new Error('a reply nobody asked for');
        head.replies.push(r[0]);
        if (head.replies.length === head.count) {
          this.#waiting.shift();
          head.resolve(head.replies);
        }
      }
    } catch (error) {
      this.#fail(error as Error);
      return;
    }
    this.#buf = this.#buf.subarray(at);
  }

  #fail(error: Error): void {
    this.#dead ??= error;
    this.#socket.destroy();
    for (const w of this.#waiting.splice(0)) w.reject(this.#dead);
  }

  close(): void {
    this.#fail(new Error('the bridge closed'));
  }
}

/**
 * A few connections to one redis-server, opened on first use and again after one fails. Each
 * HTTP request goes whole to one of them, the least busy: two requests in flight at once may run
 * in either order, as on the real service, where they may reach different connections.
 * @internal
 */
export class RespPool {
  readonly #conns: (RespConnection | undefined)[];
  #next = 0;

  constructor(
    readonly host: string,
    readonly port: number,
    size: number,
  ) {
    this.#conns = new Array(size).fill(undefined);
  }

  /** Sends one group of commands on one connection: its replies in order. */
  send(commands: readonly (readonly string[])[]): Promise<Reply[]> {
    let best = -1;
    for (let k = 0; k < this.#conns.length; k++) {
      const i = (this.#next + k) % this.#conns.length;
      const c = this.#conns[i];
      if (c === undefined || !c.alive) {
        best = i;
        break;
      }
      if (best < 0 || c.pending < this.#conns[best]!.pending) best = i;
    }
    this.#next = (best + 1) % this.#conns.length;
    let conn = this.#conns[best];
    if (conn === undefined || !conn.alive) {
      conn = new RespConnection(this.host, this.port);
      this.#conns[best] = conn;
    }
    return conn.send(commands);
  }

  close(): void {
    for (const c of this.#conns) c?.close();
    this.#conns.fill(undefined);
  }
}
