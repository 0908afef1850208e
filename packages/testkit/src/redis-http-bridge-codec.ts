// The JSON side of the HTTP bridge: a command as the REST API takes it (a JSON array whose first
// element is the command name), and a RESP reply as the REST API returns it.
import { type Reply, RespInteger, RespStatus } from './redis-http-bridge-resp.js';

/**
 * Commands that change the state of the connection they run on. Every request of every client
 * shares the bridge's few connections (as the real service's requests share its), so one of these
 * would leak into other requests: refused, the way a REST endpoint without sessions must.
 */
const CONNECTION_STATE = new Set([
  'auth',
  'client',
  'discard',
  'exec',
  'hello',
  'monitor',
  'multi',
  'psubscribe',
  'punsubscribe',
  'quit',
  'reset',
  'select',
  'ssubscribe',
  'subscribe',
  'sunsubscribe',
  'unsubscribe',
  'unwatch',
  'watch',
]);

/**
 * One command from a request body: its arguments as strings (JSON numbers and booleans as the
 * REST API reads them), or why it cannot run (a message for `{ error }`).
 * @internal
 */
export function commandOf(value: unknown): string[] | { error: string } {
  if (!Array.isArray(value) || value.length === 0) {
    return { error: 'ERR the command must be a non-empty JSON array' };
  }
  const args: string[] = [];
  for (const v of value) {
    if (typeof v === 'string') args.push(v);
    else if (typeof v === 'number' || typeof v === 'boolean') args.push(String(v));
    else return { error: `ERR unsupported argument ${JSON.stringify(v)}` };
  }
  const name = args[0]!.toLowerCase();
  if (CONNECTION_STATE.has(name)) {
    return { error: `ERR Command is not available over the REST API: '${name}'` };
  }
  return args;
}

/**
 * A reply as JSON text. In base64 mode every string is base64 of its bytes except the status
 * `OK`; otherwise bytes that are not UTF-8 become U+FFFD, as the REST API documents. Integers go
 * out as Redis printed them. An error nested in an array (a Lua table holding an error reply)
 * goes out as its message, a string.
 * @internal
 */
export function replyJson(reply: Reply, base64: boolean): string {
  if (reply === null) return 'null';
  if (reply instanceof RespInteger) return reply.digits;
  if (reply instanceof RespStatus) {
    const plain = !base64 || reply.text === 'OK';
    return JSON.stringify(plain ? reply.text : Buffer.from(reply.text).toString('base64'));
  }
  if (Buffer.isBuffer(reply)) {
    return JSON.stringify(base64 ? reply.toString('base64') : reply.toString('utf8'));
  }
  if (reply instanceof Error) return replyJson(Buffer.from(reply.message), base64);
  return `[${reply.map((r) => replyJson(r, base64)).join(',')}]`;
}

/** `{"result": …}`, or `{"error": "…"}` for an error reply (error text is never encoded). @internal */
export function itemJson(reply: Reply, base64: boolean): string {
  if (reply instanceof Error) return JSON.stringify({ error: reply.message });
  return `{"result":${replyJson(reply, base64)}}`;
}
