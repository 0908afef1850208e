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
   * Sends one command (`EVALSHA`, `EVAL`, `DEL` or `TIME`) to the node owning `firstKey`, and
   * resolves with its reply. An error reply rejects, with Redis's message (the store looks for
   * `NOSCRIPT` at its start).
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
}
