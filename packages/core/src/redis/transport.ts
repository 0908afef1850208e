/**
 * What a Redis client adapter hands to `RedisStore`: how to send one command to the node that
 * owns a key, and what the client can do. Everything else (the scripts, `NOSCRIPT` recovery,
 * batching, strict mode's check, the clock offset, ordering resets behind calls, error wrapping)
 * is the store's, the same for every client.
 * @example
 * A transport over a client that sends one command as an argv array.
 * ```ts
 * import type { RedisTransport } from '@floodgate/core/redis';
 *
 * interface MyClient { command(argv: string[]): Promise<unknown>; connected: boolean }
 * declare const client: MyClient;
 *
 * const transport: RedisTransport = {
 *   label: 'my-client',
 *   canBatch: true, // one node: a script may carry the keys of several identities
 *   send: (_firstKey, name, args) => client.command([name, ...args]),
 *   isReady: () => client.connected,
 * };
 * ```
 * @public
 */
export interface RedisTransport {
  /** Names the client in error messages: `Redis (<label>) failed: …`. */
  readonly label: string;
  /**
   * Whether one script run may carry the keys of several identities: true for a connection to
   * one node, false for a cluster client (a script's keys must share a slot). Read once, when
   * the store is built: the store batches (its `batch` option) only if this is true.
   */
  readonly canBatch: boolean;
  /**
   * Sends one command (`EVALSHA`, `EVAL`, `DEL`, `TIME` or `PUBLISH`) to the node owning
   * `firstKey`, and resolves with its reply. An error reply rejects, with Redis's message (the
   * store looks for `NOSCRIPT` at its start).
   */
  send(firstKey: string, name: string, args: string[]): Promise<unknown>;
  /**
   * Strict mode (the `replicas` option): sends `name args` and then `WAIT count timeoutMs` to the
   * node owning `firstKey`, pipelined on one connection (WAIT counts the replicas that hold that
   * connection's writes). Resolves with the command's reply (an error reply as an Error value,
   * not thrown) and WAIT's count. Without it, a store refuses `replicas` when it is built.
   */
  sendWithWait?(
    firstKey: string,
    name: string,
    args: string[],
    count: number,
    timeoutMs: number,
  ): Promise<[unknown, number]>;
  /** Whether the client is connected now (only asked with `rejectIfNotReady`). */
  isReady(): boolean;
  /**
   * Opens a connection of its own to a node of this client's server or cluster and subscribes it
   * to `channel`: the change feed the limiters' blocked-key caches listen to (changes.ts).
   * Resolves once Redis confirmed the subscription; rejects if that cannot be done now (the store
   * tries again later). After that, `events.lost` is called once if the connection ends by itself
   * (it must not reconnect on its own: the store opens a new one, and a reconnect would hide the
   * messages missed meanwhile), or when the app closes this client. Without it, the store has
   * no change feed and the caches fall back to their staleness bound. Stores whose transports
   * return the same function here share one subscriber connection per channel: an adapter
   * returns one per client.
   * @beta
   */
  subscribe?(channel: string, events: SubscriberEvents): Promise<RedisSubscriber>;
  /**
   * True once the app closed this client for good: the store then opens no subscriber (and
   * asks again later). Without it, the client is taken to be open.
   * @beta
   */
  isClosed?(): boolean;
}

/**
 * What a subscriber connection (`RedisTransport.subscribe`) tells the store.
 * @example
 * ```ts
 * import type { SubscriberEvents } from '@floodgate/core/redis';
 *
 * const events: SubscriberEvents = {
 *   message: (text) => console.log('changed:', text),
 *   lost: () => console.log('subscriber gone: messages may be missed until the next one'),
 * };
 * ```
 * @beta
 */
export interface SubscriberEvents {
  /** A message published on the channel, as text. */
  message(text: string): void;
  /** The connection ended (once, and only after the subscription was confirmed). */
  lost(): void;
}

/**
 * A subscriber connection opened by `RedisTransport.subscribe`.
 * @example
 * ```ts
 * import type { RedisSubscriber } from '@floodgate/core/redis';
 *
 * declare const subscriber: RedisSubscriber;
 * await subscriber.ping?.(); // every message published before this PING has been delivered
 * subscriber.close();
 * ```
 * @beta
 */
export interface RedisSubscriber {
  /**
   * A `PING` on the subscriber connection. Its reply comes after every message Redis pushed on
   * that connection before it, so each reply proves nothing was missed until then (the store's
   * heartbeat). Absent for a client that cannot send a command while subscribed: the store then
   * trusts the client's connection events alone.
   */
  ping?(): Promise<unknown>;
  /** Closes the connection; `lost` is not called for it. */
  close(): void;
}
