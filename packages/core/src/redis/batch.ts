import { FloodgateError } from '../errors.js';
import type { PolicyKind } from '../policies/kinds.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import type { Policy } from '../types.js';
import { argCount, blockingOf, compileScript, type LimitScript } from './lua.js';
import { decodeResults, decodeScriptReply, writeScriptArgs } from './protocol.js';
import type { ScriptRunner } from './runner.js';

/** The batch script of one combination of kinds, and how many KEYS and ARGV a call takes. */
export interface BatchScript extends LimitScript {
  readonly keysPerCall: number;
  readonly argsPerCall: number;
}

// Per kinds, not only per policies array: calls of two limiters with the same kinds share a run.
const byKinds = new Map<string, BatchScript>();
const byPolicies = new WeakMap<readonly Policy[], BatchScript>();

/** The batch script for calls with these policies; cached per policies array, like `scriptFor`. */
export function batchScriptFor(policies: readonly Policy[]): BatchScript {
  let script = byPolicies.get(policies);
  if (script === undefined) {
    const kinds: PolicyKind[] = policies.map((p) => p.kind);
    const blocking = blockingOf(policies);
    const signature = `${kinds.join(',')}/${blocking.map(Number).join('')}`;
    script = byKinds.get(signature);
    if (script === undefined) {
      script = {
        ...compileScript('batch', kinds, blocking),
        keysPerCall: kinds.length + blocking.filter(Boolean).length,
        argsPerCall: argCount(kinds, blocking),
      };
      byKinds.set(signature, script);
    }
    byPolicies.set(policies, script);
  }
  return script;
}

/** Calls per batch unless `maxCalls` says otherwise. */
export const DEFAULT_MAX_CALLS = 64;
// One command's KEYS and ARGV: 512 calls of 16 policies is 8 192 keys, far below Redis's limits.
const MAX_CALLS = 512;

/**
 * The `batch` option: the most calls per script run, or 0 for off. The cap bounds how long one
 * script holds the Redis server (every other client waits while it runs) and the size of one
 * command; past about 64 calls a batch saves nothing more per call (docs/stores.md).
 */
export function checkBatch(value: unknown): number {
  if (value === undefined || value === true) return DEFAULT_MAX_CALLS;
  if (value === false) return 0;
  const max = (value as { maxCalls?: unknown } | null)?.maxCalls;
  const ok =
    typeof value === 'object' &&
    value !== null &&
    Object.keys(value).every((k) => k === 'maxCalls') &&
    (max === undefined ||
      (typeof max === 'number' && Number.isSafeInteger(max) && max >= 1 && max <= MAX_CALLS));
  if (!ok) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `batch must be a boolean or { maxCalls }, maxCalls a positive integer (at most ${MAX_CALLS})`,
    );
  }
  return (max as number | undefined) ?? DEFAULT_MAX_CALLS;
}

interface Pending {
  readonly call: StoreCall;
  readonly now: number | undefined;
  readonly deadline: number | undefined;
  resolve(results: readonly PolicyResult[]): void;
  reject(error: unknown): void;
}

const defer: (fn: () => void) => void =
  typeof process === 'object' && typeof process?.nextTick === 'function'
    ? (fn) => process.nextTick(fn)
    : queueMicrotask;

/**
 * Coalesces the calls that reach a store in one tick into one script run per combination of
 * kinds. The flush runs on `process.nextTick`, which Node runs only once the microtask queue is
 * empty: every caller woken by the same batch of replies has then had its turn to call again. A
 * group of one goes through the plain script, so one call in flight costs one deferral, no more.
 */
export class Batcher {
  readonly #max: number;
  readonly #runner: ScriptRunner;
  readonly #groups = new Map<BatchScript, Pending[]>();
  #scheduled = false;

  constructor(maxCalls: number, runner: ScriptRunner) {
    this.#max = maxCalls;
    this.#runner = runner;
  }

  submit(call: StoreCall, now?: number, deadline?: number): Promise<readonly PolicyResult[]> {
    const script = batchScriptFor(call.policies);
    return new Promise((resolve, reject) => {
      let group = this.#groups.get(script);
      if (group === undefined) {
        group = [];
        this.#groups.set(script, group);
      }
      group.push({ call, now, deadline, resolve, reject });
      if (group.length >= this.#max) {
        // Full: it goes now, and later calls of this tick start a new group.
        this.#groups.delete(script);
        this.#dispatch(script, group);
      } else if (!this.#scheduled) {
        this.#scheduled = true;
        defer(this.#flush);
      }
    });
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    for (const [script, group] of this.#groups) this.#dispatch(script, group);
    this.#groups.clear();
  };

  #dispatch(script: BatchScript, group: Pending[]): void {
    if (group.length === 1) {
      const p = group[0]!;
      this.#runner.one(p.call, p.now, p.deadline).then(p.resolve, p.reject);
    } else {
      void this.#many(script, group);
    }
  }

  async #many(script: BatchScript, group: Pending[]): Promise<void> {
    const k = script.keysPerCall;
    const args = new Array<string>(2 + group.length * (k + script.argsPerCall));
    args[0] = script.sha1;
    args[1] = String(group.length * k);
    let at = 2;
    for (const p of group) for (let i = 0; i < k; i++) args[at++] = p.call.keys[i]!;
    const clock = this.#runner.clock;
    for (const p of group) at += writeScriptArgs(args, at, p.call, p.now, p.deadline, clock);
    let reply: unknown;
    try {
      reply = await this.#runner.run(group[0]!.call.keys[0]!, args, script);
    } catch (error) {
      // Nothing of the batch is known to have run: each call fails as it would have alone.
      for (const p of group) p.reject(error);
      return;
    }
    const received = performance.now();
    // batch.lua's reply: per call five fields per policy, or one nested 'late' / 'error' entry;
    // then the batch's TIME.
    const width = group[0]!.call.policies.length * 5;
    const parts: (number | unknown[])[] = [];
    let pos = 0;
    if (Array.isArray(reply)) {
      for (let i = 0; i < group.length && pos < reply.length - 1; i++) {
        if (Array.isArray(reply[pos])) {
          parts.push(reply[pos] as unknown[]);
          pos += 1;
        } else {
          parts.push(pos);
          pos += width;
        }
      }
    }
    if (!Array.isArray(reply) || parts.length !== group.length || pos !== reply.length - 1) {
      const error = new FloodgateError('STORE_PROTOCOL', 'unexpected reply from the batch script');
      for (const p of group) p.reject(error);
      return;
    }
    const time = Number(reply[pos]);
    // Every call that read TIME read the batch's one.
    if (time > 0) this.#runner.offset.sample(time, received);
    for (let i = 0; i < group.length; i++) {
      const part = parts[i]!;
      const p = group[i]!;
      try {
        if (typeof part === 'number') {
          p.resolve(decodeResults(reply, part, p.call.policies.length));
        } else if (part.length === 2 && String(part[0]) === 'error') {
          throw this.#runner.unavailable(new Error(String(part[1])));
        } else {
          // { 'late', time }: STORE_TIMEOUT, as decodeScriptReply reads it alone.
          decodeScriptReply(part, p.call.policies.length);
          throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply from the batch script');
        }
      } catch (error) {
        p.reject(error);
      }
    }
  }
}
