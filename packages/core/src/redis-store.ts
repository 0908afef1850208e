import { ClockOffset } from './clock-offset.js';
import { FloodgateError, isFloodgateError } from './errors.js';
import { KeyOrder } from './key-order.js';
import { Batcher, checkBatch } from './redis-batch.js';
import { checkReplicas, OPTION_NAMES, type RedisStoreOptions } from './redis-options.js';
import { decodeScriptReply, encodeScriptArgs, type LimitScript, scriptFor } from './script.js';
import type { PolicyResult, Store, StoreCall } from './store.js';

export type { RedisStoreOptions };

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/**
 * What the Redis stores share: option checks, the one-`EVALSHA` decision with its `NOSCRIPT`
 * recovery, one-`DEL` resets, and error wrapping. A client adapter supplies `send` (one command,
 * routed to the node owning the first key) and `isReady`.
 * @example
 * A store for another Redis client: supply `send`, `isReady` and `fallback`.
 * ```ts
 * import { RedisScriptStore, type RedisStoreOptions } from '@floodgate/core';
 * import type { Store } from '@floodgate/core/store';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * interface MyClient { command(argv: string[]): Promise<unknown>; connected: boolean }
 * class MyRedisStore extends RedisScriptStore {
 *   constructor(readonly client: MyClient, options: RedisStoreOptions = {}) {
 *     super('my-client', options);
 *   }
 *   protected send(_firstKey: string, name: string, args: string[]): Promise<unknown> {
 *     return this.client.command([name, ...args]);
 *   }
 *   protected isReady(): boolean { return this.client.connected; }
 *   fallback(): Store { return new MemoryStore({ now: this.clockNow }); }
 * }
 * ```
 */
export abstract class RedisScriptStore implements Store {
  readonly remote = true;
  /** Set with `clock: 'client'` only: the limiter's blocked-key cache then runs on this clock. */
  readonly now?: () => number;
  /** The clock for the fallback store: the client clock, or `Date.now`. */
  protected readonly clockNow: () => number;
  readonly #label: string;
  readonly #rejectIfNotReady: boolean;
  readonly #offset = new ClockOffset();
  readonly #replicas: { count: number; timeoutMs: number } | undefined;
  readonly #maxBatch: number;
  // Decided on the first call: the adapter says whether it can batch once it is constructed.
  #batcher: Batcher | null | undefined;
  readonly #order = new KeyOrder();
  /** The `TIME` in flight while the offset to Redis's clock is not known yet. */
  #probe: Promise<void> | undefined;

  protected constructor(label: string, options: RedisStoreOptions) {
    if (typeof options !== 'object' || options === null) {
      throw new FloodgateError('INVALID_OPTION', `${label}: options must be an object`);
    }
    for (const key of Object.keys(options)) {
      if (!OPTION_NAMES.includes(key)) {
        throw new FloodgateError('INVALID_OPTION', `${label}: unknown option "${key}"`);
      }
    }
    const clock = options.clock ?? 'server';
    if (clock !== 'server' && clock !== 'client') {
      throw new FloodgateError('INVALID_OPTION', `clock must be 'server' or 'client'`);
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'now must be a function returning ms');
    }
    this.#label = label;
    this.clockNow = options.now ?? Date.now;
    if (clock === 'client') this.now = this.clockNow;
    this.#rejectIfNotReady = options.rejectIfNotReady === true;
    this.#replicas = checkReplicas(options.replicas);
    const maxBatch = checkBatch(options.batch);
    // Strict mode pairs each script run with its own WAIT: never batched.
    this.#maxBatch = this.#replicas === undefined ? maxBatch : 0;
    if (
      this.#replicas !== undefined &&
      this.sendWithWait === RedisScriptStore.prototype.sendWithWait
    ) {
      throw new FloodgateError(
        'INVALID_OPTION',
        `${label}: replicas (strict mode) is not supported`,
      );
    }
  }

  /** Sends one command (`EVALSHA`, `EVAL` or `DEL`) to the node owning `firstKey`. */
  protected abstract send(firstKey: string, name: string, args: string[]): Promise<unknown>;

  /**
   * Strict mode: sends `name args` and then `WAIT count timeoutMs` to the node owning `firstKey`,
   * pipelined on one connection (WAIT counts the replicas that hold that connection's writes).
   * Resolves with the command's reply (an error reply as an Error value, not thrown) and WAIT's
   * count. Not abstract, so an adapter written before strict mode still compiles; the
   * `replicas` option is refused for an adapter that does not override it.
   */
  protected sendWithWait(
    _firstKey: string,
    _name: string,
    _args: string[],
    _count: number,
    _timeoutMs: number,
  ): Promise<[unknown, number]> {
    return Promise.reject(new Error('sendWithWait is not implemented by this store'));
  }

  /**
   * Whether one script run may carry the keys of several identities: true for a connection to
   * one node. False by default, and for a cluster client (a script's keys must share a slot).
   */
  protected canBatch(): boolean {
    return false;
  }

  /** Whether the client is connected now (only asked with `rejectIfNotReady`). */
  protected abstract isReady(): boolean;

  /** The in-process store the limiter decides with while Redis fails. */
  abstract fallback(): Store;

  #unavailable(error: unknown): FloodgateError {
    if (isFloodgateError(error)) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new FloodgateError('STORE_UNAVAILABLE', `Redis (${this.#label}) failed: ${message}`, {
      cause: error,
    });
  }

  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    const keys = call.keys;
    return this.#order.track(this.#evaluate(call, this.#order.barrier(keys)), keys);
  }

  async #evaluate(
    call: StoreCall,
    barrier: Promise<unknown> | undefined,
  ): Promise<readonly PolicyResult[]> {
    let now: number | undefined;
    if (this.now !== undefined) {
      now = this.now();
      if (!Number.isSafeInteger(now) || now < 0) {
        throw new FloodgateError('INVALID_OPTION', `now() must return integer ms, got ${now}`);
      }
    }
    if (this.#rejectIfNotReady && !this.isReady()) {
      throw new FloodgateError('STORE_UNAVAILABLE', `Redis (${this.#label}) is not ready`);
    }
    if (barrier !== undefined) await barrier;
    let deadline: number | undefined;
    if (call.deadline !== undefined && call.mode === 'limit') {
      // One TIME for all the calls waiting to know the clock: they then go on in one tick, in
      // one batch, instead of one TIME each and batches split by when each TIME came back.
      if (!this.#offset.known) await this.#sharedProbe(call.keys[0]!);
      deadline = this.#offset.toRedis(call.deadline);
    }
    if (this.#batcher === undefined) {
      this.#batcher =
        this.#maxBatch > 0 && this.canBatch() ? new Batcher(this.#maxBatch, this.#transport) : null;
    }
    if (this.#batcher !== null) return this.#batcher.submit(call, now, deadline);
    return this.#one(call, now, deadline);
  }

  readonly #transport = {
    one: (call: StoreCall, now?: number, deadline?: number) => this.#one(call, now, deadline),
    run: (firstKey: string, args: string[], script: LimitScript) =>
      this.#run(args, script, (name) => this.send(firstKey, name, args)),
    sample: (time: number, received: number) => this.#offset.sample(time, received),
    unavailable: (error: unknown) => this.#unavailable(error),
  };

  /** `EVALSHA`, and `EVAL` after `NOSCRIPT`; any failure is `STORE_UNAVAILABLE`. */
  async #run(
    args: string[],
    script: LimitScript,
    send: (name: string) => Promise<unknown>,
  ): Promise<unknown> {
    try {
      return await send('EVALSHA');
    } catch (error) {
      if (!isNoScript(error)) throw this.#unavailable(error);
      // The script cache was emptied (flush, restart, failover): EVAL loads it again on the
      // node that owns the keys, with the same arguments.
      try {
        args[0] = script.source;
        return await send('EVAL');
      } catch (retryError) {
        throw this.#unavailable(retryError);
      }
    }
  }

  /** One decision, one run of the plain script. */
  async #one(
    call: StoreCall,
    now: number | undefined,
    deadline: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    const firstKey = call.keys[0]!;
    const n = call.keys.length;
    // One script per combination of policy kinds, cached per limiter's policies array.
    const script = scriptFor(call.policies);
    const args = [script.sha1, String(n), ...call.keys, ...encodeScriptArgs(call, now, deadline)];
    // Strict mode waits for replicas only where something may be written.
    const strict = call.mode === 'limit' ? this.#replicas : undefined;
    let acked = 0;
    const run = async (name: string): Promise<unknown> => {
      if (strict === undefined) return this.send(firstKey, name, args);
      const [r, w] = await this.sendWithWait(firstKey, name, args, strict.count, strict.timeoutMs);
      if (r instanceof Error) throw r;
      acked = w;
      return r;
    };
    const reply = await this.#run(args, script, run);
    const received = performance.now();
    const { results, time } = decodeScriptReply(reply, n);
    if (time > 0) this.#offset.sample(time, received);
    // `!(≥)`, not `<`: a WAIT reply that is not a number confirms nothing.
    if (strict !== undefined && !(acked >= strict.count) && results.every((r) => r.allowed)) {
      // Charged on the master, not yet on enough replicas: a failover now could forget it.
      throw new FloodgateError(
        'STORE_UNAVAILABLE',
        `Redis (${this.#label}): the admission reached ${acked} of ${strict.count} replicas ` +
          `within ${strict.timeoutMs} ms (strict mode); the master keeps the charge`,
      );
    }
    return results;
  }

  /** The `TIME` in flight, or a new one; forgotten once settled (a failed one is tried again). */
  #sharedProbe(firstKey: string): Promise<void> {
    if (this.#probe === undefined) {
      const probe = this.#probeTime(firstKey);
      this.#probe = probe;
      const forget = () => {
        if (this.#probe === probe) this.#probe = undefined;
      };
      probe.then(forget, forget);
    }
    return this.#probe;
  }

  /** One `TIME`, before the first call with a deadline: a deadline needs Redis's clock. */
  async #probeTime(firstKey: string): Promise<void> {
    let reply: unknown;
    try {
      reply = await this.send(firstKey, 'TIME', []);
    } catch (error) {
      throw this.#unavailable(error);
    }
    const received = performance.now();
    if (!Array.isArray(reply) || reply.length !== 2) {
      throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply to TIME');
    }
    this.#offset.sample(Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000), received);
  }

  /** One `DEL`, after the calls on the keys made before it (see `KeyOrder`). */
  reset(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return Promise.resolve();
    const argv = keys.slice();
    return this.#order.reset(argv, async () => {
      try {
        // All keys of one identity share a hash tag: one DEL, one slot.
        await this.send(argv[0]!, 'DEL', argv);
      } catch (error) {
        throw this.#unavailable(error);
      }
    });
  }
}
