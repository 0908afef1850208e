import { FloodgateError } from '@floodgate/core';
import { RedisStore, type RedisStoreOptions, type RedisTransport } from '@floodgate/core/redis';
import type { Store } from '@floodgate/core/store';
import { MemoryStore } from '@floodgate/memory';
import type { Redis } from '@upstash/redis';

/**
 * Options of `UpstashStore`: those of every Redis store (`RedisStoreOptions` in
 * `@floodgate/core/redis`, where each default is), with three that HTTP changes. `replicas`
 * (strict mode) is refused: WAIT counts the replicas holding one connection's writes, and a REST
 * request has no connection of its own to pipeline it on. `rejectIfNotReady` never fails a call:
 * HTTP has no connection that could be down before a request is made. `changes` publishes resets
 * for other processes' subscribers, but this store subscribes to nothing (see the README).
 * @example
 * A store on this process's clock, batching at most 32 decisions per script run.
 * ```ts
 * import { UpstashStore, type UpstashStoreOptions } from '@floodgate/upstash';
 * import { Redis } from '@upstash/redis';
 *
 * const options: UpstashStoreOptions = { clock: 'client', batch: { maxCalls: 32 } };
 * const store = new UpstashStore(Redis.fromEnv({ retry: { retries: 0 } }), options);
 * ```
 * @public
 */
export type UpstashStoreOptions = RedisStoreOptions;

/** The part of `@upstash/redis`'s `Requester` the transport uses (its `client` field). */
interface Requester {
  request(req: { body: unknown }): Promise<{ result?: unknown; error?: string }>;
}

/**
 * The Redis store over HTTP: Upstash's REST API through an `@upstash/redis` client, for runtimes
 * that have `fetch` and no TCP (edge functions, Workers, Deno Deploy) or no connection to keep.
 * Every decision is one `EVALSHA` of Floodgate's limit script (the Lua every Redis store runs), so
 * it is exact and atomic across every process sharing the database, whatever client each uses;
 * on `NOSCRIPT` the same call goes once more as `EVAL`. Decisions made while one is in flight go
 * together as one script run (the `batch` option). Each command is one HTTP request, sent through
 * the client's own requester (its URL, token, retries, headers and base64 decoding): its
 * auto-pipelining and JSON deserialization are bypassed, so replies reach the store as Redis sent
 * them. It never configures the client. Its `fallback()`, the limiter's default `onStoreError`, is
 * an in-process `MemoryStore`: during an outage each process keeps the limits on its own.
 * @example
 * ```ts
 * import { createLimiter, tokenBucket } from '@floodgate/core';
 * import { UpstashStore } from '@floodgate/upstash';
 * import { Redis } from '@upstash/redis';
 *
 * const redis = new Redis({
 *   url: process.env.UPSTASH_REDIS_REST_URL!,
 *   token: process.env.UPSTASH_REDIS_REST_TOKEN!,
 *   retry: { retries: 0 }, // one attempt: a script sent again may be charged twice
 * });
 * const limiter = createLimiter({
 *   store: new UpstashStore(redis),
 *   policy: tokenBucket({ limit: 100, interval: '1m' }),
 *   onStoreError: 'deny',
 * });
 * const d = await limiter.limit('key_123');
 * ```
 * @public
 */
export class UpstashStore extends RedisStore {
  /** For metrics and traces (`Store.kind`). */
  override readonly kind: string = 'upstash';

  constructor(redis: Redis, options: UpstashStoreOptions = {}) {
    super(upstashTransport(redis), options);
  }

  /** A fresh in-process MemoryStore: the limiter's default `onStoreError`. */
  fallback(): Store {
    return new MemoryStore({ now: this.clockNow });
  }
}

/** How the store reaches Redis through an `@upstash/redis` client. */
function upstashTransport(redis: Redis): RedisTransport {
  // The requester every command of the client goes through (`Redis.client`, an HttpClient for a
  // client made from a URL and token). Not the public command methods: those deserialize by the
  // client's settings, and through auto-pipelining an error comes back as "Command failed: …",
  // which hides NOSCRIPT from the store.
  const requester = (redis as unknown as { client?: Requester } | null)?.client;
  if (typeof requester?.request !== 'function') {
    throw new FloodgateError(
      'INVALID_OPTION',
      'UpstashStore needs an @upstash/redis Redis (new Redis({ url, token }) or Redis.fromEnv())',
    );
  }
  return {
    label: 'upstash',
    // One logical server: a script may carry the keys of several identities.
    canBatch: true,
    send: (_firstKey, name, args) => send(requester, [name, ...args]),
    // No connection to be down before a request: a failure shows in the request itself.
    isReady: () => true,
  };
}

/** One command, one HTTP request; an error reply rejects with Redis's own message. */
async function send(requester: Requester, body: string[]): Promise<unknown> {
  let reply: { result?: unknown; error?: string };
  try {
    // A method call each time: `redis.use(middleware)` replaces `request` on the requester.
    reply = await requester.request({ body });
  } catch (error) {
    throw redisError(error, body);
  }
  if (reply.error !== undefined && reply.error !== null) throw new Error(String(reply.error));
  if (reply.result === undefined) throw new Error('the REST API answered without a result');
  return reply.result;
}

/**
 * The client's error for a non-2xx answer is "<Redis's error>, command was: <the body as JSON>":
 * the suffix goes (it would carry the whole script of an `EVAL`, and the store looks for NOSCRIPT
 * at the start of the message anyway), the client's error stays as `cause`.
 */
function redisError(error: unknown, body: string[]): unknown {
  if (!(error instanceof Error)) return error;
  const suffix = `, command was: ${JSON.stringify(body)}`;
  if (!error.message.endsWith(suffix)) return error;
  return new Error(error.message.slice(0, -suffix.length), { cause: error });
}
