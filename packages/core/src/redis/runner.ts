import { FloodgateError, isFloodgateError } from '../errors.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import { ClockOffset } from './clock-offset.js';
import { type LimitScript, scriptFor } from './lua.js';
import { decodeScriptReply, scriptArgCount, writeScriptArgs } from './protocol.js';
import type { RedisTransport } from './transport.js';

function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}

/** Strict mode's settings: WAIT for `count` replicas, at most `timeoutMs`. */
export interface Replicas {
  readonly count: number;
  readonly timeoutMs: number;
}

/**
 * Runs scripts through one transport: `EVALSHA` with its `NOSCRIPT` recovery, strict mode's
 * WAIT, the clock offset learnt from the replies, and the wrapping of failures. `RedisStore`
 * and its `Batcher` both send through it, so a batch and a lone call fail the same way.
 */
export class ScriptRunner {
  readonly offset = new ClockOffset();
  readonly #transport: RedisTransport;
  readonly #replicas: Replicas | undefined;
  /** The host's clock: where a quota's period ends are computed on the server clock. */
  readonly clock: () => number;

  constructor(
    transport: RedisTransport,
    replicas: Replicas | undefined,
    clock: () => number = Date.now,
  ) {
    this.#transport = transport;
    this.#replicas = replicas;
    this.clock = clock;
  }

  /** A failure as `STORE_UNAVAILABLE` (a `FloodgateError` already is one, and stays as it is). */
  unavailable(error: unknown): FloodgateError {
    if (isFloodgateError(error)) return error;
    const message = error instanceof Error ? error.message : String(error);
    const label = this.#transport.label;
    return new FloodgateError('STORE_UNAVAILABLE', `Redis (${label}) failed: ${message}`, {
      cause: error,
    });
  }

  /** Sends one command to the node owning `firstKey`; any failure is `STORE_UNAVAILABLE`. */
  async command(firstKey: string, name: string, args: string[]): Promise<unknown> {
    try {
      return await this.#transport.send(firstKey, name, args);
    } catch (error) {
      throw this.unavailable(error);
    }
  }

  /** Runs `args` (sha1 first) on the node owning `firstKey`, `EVAL` again after `NOSCRIPT`. */
  run(firstKey: string, args: string[], script: LimitScript): Promise<unknown> {
    const transport = this.#transport;
    return this.#run(args, script, (name) => transport.send(firstKey, name, args), same);
  }

  /**
   * `EVALSHA`, and `EVAL` after `NOSCRIPT`, then `decode` the reply; a failure to send is
   * `STORE_UNAVAILABLE`, what `decode` throws is left as it is. Promises chained by hand, not an
   * async function: on a decision's path each async layer cost a promise and a microtask hop.
   * Never throws: a failure rejects.
   */
  #run<T>(
    args: string[],
    script: LimitScript,
    send: (name: string) => Promise<unknown>,
    decode: (reply: unknown) => T,
  ): Promise<T> {
    return attempt(send, 'EVALSHA').then(decode, (error: unknown) => {
      if (!isNoScript(error)) throw this.unavailable(error);
      // The script cache was emptied (flush, restart, failover): EVAL loads it again on the
      // node that owns the keys, with the same arguments.
      args[0] = script.source;
      return attempt(send, 'EVAL').then(decode, (retryError: unknown) => {
        throw this.unavailable(retryError);
      });
    });
  }

  /** One decision, one run of the plain script. Never throws: a failure rejects. */
  one(
    call: StoreCall,
    now: number | undefined,
    deadline: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    // Strict mode waits for replicas only where something may be written.
    const strict = call.mode !== 'peek' ? this.#replicas : undefined;
    if (strict !== undefined) return this.#strict(call, now, deadline, strict);
    let args: string[];
    let script: LimitScript;
    try {
      script = scriptFor(call.policies, call.overrides, call.migrate, call.costs !== undefined);
      args = this.#args(script, call, now, deadline);
    } catch (error) {
      return Promise.reject(error);
    }
    const firstKey = call.keys[0]!;
    const transport = this.#transport;
    const policyCount = call.policies.length;
    const overrides = call.overrides === true;
    return this.#run(
      args,
      script,
      (name) => transport.send(firstKey, name, args),
      (reply) => this.#results(reply, policyCount, overrides),
    );
  }

  /** `[sha1, numkeys, ...keys, ...ARGV]` in one array, written in place. */
  #args(
    script: LimitScript,
    call: StoreCall,
    now: number | undefined,
    deadline: number | undefined,
  ): string[] {
    const keys = call.keys;
    const n = keys.length;
    const args = new Array<string>(2 + n + scriptArgCount(call));
    args[0] = script.sha1;
    args[1] = String(n);
    for (let i = 0; i < n; i++) args[2 + i] = keys[i]!;
    writeScriptArgs(args, 2 + n, call, now, deadline, this.clock);
    return args;
  }

  /** The plain script's reply read, and the Redis time it carries sampled. */
  #results(reply: unknown, policyCount: number, overrides: boolean): PolicyResult[] {
    const received = performance.now();
    // A refusal as late carries the Redis time it read: sampled too, for the call sent again
    // after it (lone.ts `Again`) goes on this offset.
    if (Array.isArray(reply) && reply.length === 2 && String(reply[0]) === 'late') {
      const time = Number(reply[1]);
      if (time > 0) this.offset.sample(time, received);
    }
    const { results, time } = decodeScriptReply(reply, policyCount, overrides);
    if (time > 0) this.offset.sample(time, received);
    return results;
  }

  /** One decision in strict mode: the script and a WAIT on one connection. */
  async #strict(
    call: StoreCall,
    now: number | undefined,
    deadline: number | undefined,
    strict: Replicas,
  ): Promise<readonly PolicyResult[]> {
    const script = scriptFor(call.policies, call.overrides, call.migrate, call.costs !== undefined);
    const args = this.#args(script, call, now, deadline);
    const firstKey = call.keys[0]!;
    const transport = this.#transport;
    let acked = 0;
    const send = async (name: string): Promise<unknown> => {
      // The store refuses `replicas` at construction when the transport has no sendWithWait.
      const [r, w] = await transport.sendWithWait!(
        firstKey,
        name,
        args,
        strict.count,
        strict.timeoutMs,
      );
      if (r instanceof Error) throw r;
      acked = w;
      return r;
    };
    const results = await this.#run(args, script, send, (reply) =>
      this.#results(reply, call.policies.length, call.overrides === true),
    );
    // `!(≥)`, not `<`: a WAIT reply that is not a number confirms nothing.
    if (!(acked >= strict.count) && results.every((r) => r.allowed)) {
      // Charged on the master, not yet on enough replicas: a failover now could forget it.
      throw new FloodgateError(
        'STORE_UNAVAILABLE',
        `Redis (${transport.label}): the admission reached ${acked} of ${strict.count} replicas ` +
          `within ${strict.timeoutMs} ms (strict mode); the master keeps the charge`,
      );
    }
    return results;
  }
}

const same = (reply: unknown): unknown => reply;

/** `send(name)` as a promise (a transport's thenable followed), a synchronous throw a rejection. */
function attempt(send: (name: string) => Promise<unknown>, name: string): Promise<unknown> {
  try {
    return Promise.resolve(send(name));
  } catch (error) {
    return Promise.reject(error);
  }
}
