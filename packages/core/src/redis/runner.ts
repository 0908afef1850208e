import { FloodgateError, isFloodgateError } from '../errors.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import { ClockOffset } from './clock-offset.js';
import { type LimitScript, scriptFor } from './lua.js';
import { decodeScriptReply, encodeScriptArgs } from './protocol.js';
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
    return this.#run(args, script, (name) => this.#transport.send(firstKey, name, args));
  }

  /** `EVALSHA`, and `EVAL` after `NOSCRIPT`; any failure is `STORE_UNAVAILABLE`. */
  async #run(
    args: string[],
    script: LimitScript,
    send: (name: string) => Promise<unknown>,
  ): Promise<unknown> {
    try {
      return await send('EVALSHA');
    } catch (error) {
      if (!isNoScript(error)) throw this.unavailable(error);
      // The script cache was emptied (flush, restart, failover): EVAL loads it again on the
      // node that owns the keys, with the same arguments.
      try {
        args[0] = script.source;
        return await send('EVAL');
      } catch (retryError) {
        throw this.unavailable(retryError);
      }
    }
  }

  /** One decision, one run of the plain script. */
  async one(
    call: StoreCall,
    now: number | undefined,
    deadline: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    const firstKey = call.keys[0]!;
    const n = call.keys.length;
    // One script per combination of policy kinds, cached per limiter's policies array.
    const script = scriptFor(call.policies);
    const args = [
      script.sha1,
      String(n),
      ...call.keys,
      ...encodeScriptArgs(call, now, deadline, this.clock),
    ];
    // Strict mode waits for replicas only where something may be written.
    const strict = call.mode !== 'peek' ? this.#replicas : undefined;
    let acked = 0;
    const transport = this.#transport;
    const run = async (name: string): Promise<unknown> => {
      // The store refuses `replicas` at construction when the transport has no sendWithWait.
      if (strict === undefined) return transport.send(firstKey, name, args);
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
    const reply = await this.#run(args, script, run);
    const received = performance.now();
    const { results, time } = decodeScriptReply(reply, call.policies.length);
    if (time > 0) this.offset.sample(time, received);
    // `!(≥)`, not `<`: a WAIT reply that is not a number confirms nothing.
    if (strict !== undefined && !(acked >= strict.count) && results.every((r) => r.allowed)) {
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
