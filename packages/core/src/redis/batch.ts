import { FloodgateError } from '../errors.js';
import { shadowingOf } from '../policies/compose.js';
import type { PolicyKind } from '../policies/kinds.js';
import type { PolicyResult, StoreCall } from '../store-types.js';
import type { Policy } from '../types.js';
import { argCount } from './assemble.js';
import { repeatable } from './assemble-batch.js';
import { type Pending, readBatch, sameCall, writeBlocks } from './batch-entries.js';
import { type Again, defer, isLate, type LoneSender, lateBy } from './lone.js';
import { blockingOf, compileScript, type LimitScript } from './lua.js';
import { decodeResults, decodeScriptReply } from './protocol.js';
import type { ScriptRunner } from './runner.js';

/**
 * The batch script of one combination of kinds, how many KEYS and ARGV a call takes, and whether
 * identical calls may go as one entry (batch.lua, Repeats).
 */
export interface BatchScript extends LimitScript {
  readonly keysPerCall: number;
  readonly argsPerCall: number;
  readonly repeats: boolean;
}

// Per kinds, not only per policies array: calls of two limiters with the same kinds share a run.
const byKinds = new Map<string, BatchScript>();
const byPolicies = new WeakMap<readonly Policy[], BatchScript>();
const overridingByPolicies = new WeakMap<readonly Policy[], BatchScript>();

/**
 * The batch script for calls with these policies (`overrides`: calls that read override keys);
 * cached per policies array, like `scriptFor`.
 */
export function batchScriptFor(policies: readonly Policy[], overrides = false): BatchScript {
  const cache = overrides ? overridingByPolicies : byPolicies;
  let script = cache.get(policies);
  if (script === undefined) {
    const kinds: PolicyKind[] = policies.map((p) => p.kind);
    const blocking = blockingOf(policies);
    const shadowing = shadowingOf(policies) ?? [];
    const signature = `${kinds.join(',')}/${blocking.map(Number).join('')}/${shadowing.map(Number).join('')}${overrides ? '/o' : ''}`;
    script = byKinds.get(signature);
    if (script === undefined) {
      script = {
        ...compileScript('batch', kinds, blocking, shadowing, overrides),
        keysPerCall: kinds.length * (overrides ? 2 : 1) + blocking.filter(Boolean).length,
        argsPerCall: argCount(kinds, blocking),
        // An override replaces parameters the client's replay of repeats would run on.
        repeats: repeatable(kinds) && shadowing.length === 0 && !overrides,
      };
      byKinds.set(signature, script);
    }
    cache.set(policies, script);
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

/** How long a run without a deadline counts as in flight: until it settles. */
const NO_DEADLINE = Number.POSITIVE_INFINITY;

/**
 * Sends a store's calls as script runs: a call that reaches it while none of its runs is in
 * flight goes at once, alone, through the plain script; the calls that reach it while one is in
 * flight are coalesced into one run per combination of kinds, sent on `process.nextTick`. Node
 * runs that only once the microtask queue is empty: every caller woken by the same batch of
 * replies has then had its turn to call again. So one call in flight (a quiet server, requests
 * awaited in turn) pays no deferral, and under load a batch forms while the previous run is out,
 * as Nagle's algorithm fills a packet while the last one is unacknowledged.
 */
export class Batcher {
  readonly #max: number;
  readonly #runner: ScriptRunner;
  readonly #groups = new Map<BatchScript, Pending[]>();
  #scheduled = false;
  /**
   * The runs sent and not yet settled, each with the `performance.now()` instant past which none
   * of its callers waits for it any more (the latest of their local deadlines).
   */
  readonly #inFlight = new Map<Promise<unknown>, number>();

  readonly #onLate: (call: StoreCall, until: number, at: number) => void;
  /** How a call that goes alone at once is run (lone.ts: its tick may yet run long). */
  readonly #lone: LoneSender;
  /** A call of a batch refused as late while its caller waits: once more (lone.ts). */
  readonly #again: Again;

  /**
   * `onLate`: told of a call sent later than it was queued here (this process was busy in
   * between), with the instant its caller now waits until.
   */
  constructor(
    maxCalls: number,
    runner: ScriptRunner,
    onLate: (call: StoreCall, until: number, at: number) => void,
    lone: LoneSender,
    again: Again,
  ) {
    this.#max = maxCalls;
    this.#runner = runner;
    this.#onLate = onLate;
    this.#lone = lone;
    this.#again = again;
  }

  /**
   * `deadline`: on Redis's clock, for the script; `until`: the same instant on this host's
   * (`performance.now()`), past which the caller no longer waits: `call.deadline`, or later when
   * the store held the call back before sending it (window.ts). `budget`: for a caller that asks
   * `waitUntil`, its timeoutMs, to run from when the call is sent.
   */
  submit(
    call: StoreCall,
    now?: number,
    deadline?: number,
    until: number = call.deadline ?? NO_DEADLINE,
    budget?: number,
  ): Promise<readonly PolicyResult[]> {
    // At once only with no run in flight and no flush awaited: a call queued for the next tick
    // must not be overtaken on its keys, and callers woken together go together (`hold`).
    if (!this.#scheduled && (this.#inFlight.size === 0 || this.#idle())) {
      return this.#one(call, now, deadline, until, budget);
    }
    const script = batchScriptFor(call.policies, call.overrides);
    return new Promise((resolve, reject) => {
      let group = this.#groups.get(script);
      if (group === undefined) {
        group = [];
        this.#groups.set(script, group);
      }
      group.push({ call, now, deadline, until, budget, resolve, reject });
      if (group.length >= this.#max) {
        // Full: it goes now, and later calls of this tick start a new group.
        this.#groups.delete(script);
        this.#dispatch(script, group);
      } else {
        this.hold();
      }
    });
  }

  /**
   * Until the next tick, calls are coalesced whatever is in flight. Called when a call is queued,
   * and when something many callers waited for comes (a batch's reply, the store's first `TIME`):
   * they call again before the tick, and the first of them, finding nothing in flight, would
   * otherwise go alone and split the next batch in two runs (twice the EVALSHAs at 16 in flight).
   */
  hold(): void {
    if (!this.#scheduled) {
      this.#scheduled = true;
      defer(this.#flush);
    }
  }

  /**
   * Whether every run in flight is past the deadlines of all its calls: their callers have had
   * `STORE_TIMEOUT`, and a reply that never comes (a client that drops a command) must not hold
   * every later call back a tick. Those runs are forgotten; settling later, they change nothing.
   */
  #idle(): boolean {
    const now = performance.now();
    for (const until of this.#inFlight.values()) if (until > now) return false;
    this.#inFlight.clear();
    return true;
  }

  /** One call, one run of the plain script, in flight until it settles or its deadline. */
  #one(
    call: StoreCall,
    now: number | undefined,
    deadline: number | undefined,
    until: number,
    budget: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    return this.#track(this.#lone.submit(call, now, deadline, until, budget), until);
  }

  /** Counts `run` as in flight until it settles (or `#idle` finds it past `until`); returns it. */
  #track<T>(run: Promise<T>, until: number): Promise<T> {
    this.#inFlight.set(run, until);
    // Registered first, so it runs before the callers' own reactions: a caller woken by this
    // reply that calls again finds the run no longer in flight.
    const settled = (): void => {
      this.#inFlight.delete(run);
    };
    run.then(settled, settled);
    return run;
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    const now = performance.now();
    for (const [script, group] of this.#groups) {
      this.#sentLate(group, now);
      this.#dispatch(script, group);
    }
    this.#groups.clear();
  };

  /**
   * A call queued early in a long synchronous stretch (a burst of thousands made in one tick)
   * goes out only at its end: by then its deadline may be spent, and its script would refuse to
   * charge. A call whose caller asks `waitUntil` is sent with its timeoutMs from now, as the rule
   * says (window.ts: from the moment it is sent), and the window told, so its caller waits as
   * long. Only past a tenth of its budget (lone.ts `lateBy`): on the hot path the tick is
   * microseconds and nothing changes.
   */
  #sentLate(group: Pending[], now: number): void {
    for (const p of group) {
      if (p.budget === undefined || p.deadline === undefined) continue;
      const until = now + p.budget;
      if (until <= p.until + lateBy(p.budget)) continue;
      p.until = until;
      p.deadline = this.#runner.offset.toRedis(until);
      this.#onLate(p.call, until, now);
    }
  }

  #dispatch(script: BatchScript, group: Pending[]): void {
    if (group.length === 1) {
      const p = group[0]!;
      // Sent at this tick's end, its deadline from then (`#sentLate`): the sender finds nothing
      // more to move, and a refusal as late gets the budget from its second sending.
      this.#one(p.call, p.now, p.deadline, p.until, p.budget).then(p.resolve, p.reject);
    } else {
      void this.#many(script, group);
    }
  }

  async #many(script: BatchScript, group: Pending[]): Promise<void> {
    const k = script.keysPerCall;
    // Entries: a run of identical calls goes as one (batch.lua, Repeats); counts[e] calls from
    // group[firsts[e]] on.
    const firsts: number[] = [];
    const counts: number[] = [];
    for (let i = 0; i < group.length; i++) {
      const e = counts.length - 1;
      if (script.repeats && e >= 0 && sameCall(group[firsts[e]!]!, group[i]!, k)) counts[e]!++;
      else {
        firsts.push(i);
        counts.push(1);
      }
    }
    const entries = firsts.length;
    // At most: sha, numkeys, the keys, reps, a block number per entry, a block per entry.
    const args = new Array<string>(3 + entries * (k + 1 + script.argsPerCall));
    args[0] = script.sha1;
    args[1] = String(entries * k);
    let at = 2;
    let until = Number.NEGATIVE_INFINITY;
    let reps = '';
    for (let e = 0; e < entries; e++) {
      const keys = group[firsts[e]!]!.call.keys;
      for (let i = 0; i < k; i++) args[at++] = keys[i]!;
      if (counts[e]! > 1) reps += `${reps === '' ? '' : ' '}${e + 1} ${counts[e]}`;
    }
    args[at++] = reps;
    for (const p of group) {
      if (p.until > until) until = p.until;
    }
    // One reading of this host's clock for the whole run: a quota's period ends, sent for it, are
    // then the same for identical calls (the script picks among them by TIME in any case).
    const read = this.#runner.clock();
    const clock = () => read;
    try {
      writeBlocks(args, at, group, firsts, clock);
    } catch (error) {
      // Nothing was sent: every caller fails as it would have alone, none is left unsettled.
      for (const p of group) p.reject(error);
      return;
    }
    let reply: unknown;
    try {
      reply = await this.#track(this.#runner.run(group[0]!.call.keys[0]!, args, script), until);
    } catch (error) {
      this.hold();
      // Nothing of the batch is known to have run: each call fails as it would have alone.
      for (const p of group) p.reject(error);
      return;
    }
    this.hold();
    const received = performance.now();
    const answers = Array.isArray(reply) ? readBatch(reply, group, firsts, counts) : undefined;
    if (answers === undefined) {
      const error = new FloodgateError('STORE_PROTOCOL', 'unexpected reply from the batch script');
      for (const p of group) p.reject(error);
      return;
    }
    const flat = reply as unknown[];
    const time = Number(flat[flat.length - 1]);
    // Every call that read TIME read the batch's one.
    if (time > 0) this.#runner.offset.sample(time, received);
    for (let i = 0; i < group.length; i++) {
      const answer = answers[i]!;
      const p = group[i]!;
      try {
        if (typeof answer === 'number') {
          p.resolve(decodeResults(flat, answer, p.call.policies.length, p.call.overrides));
        } else if (!Array.isArray(answer)) {
          p.resolve(answer.results);
        } else if (answer.length === 2 && String(answer[0]) === 'error') {
          throw this.#runner.unavailable(new Error(String(answer[1])));
        } else {
          // { 'late', time }: STORE_TIMEOUT, as decodeScriptReply reads it alone.
          decodeScriptReply(answer, p.call.policies.length);
          throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply from the batch script');
        }
      } catch (error) {
        const again =
          p.deadline !== undefined && isLate(error)
            ? this.#again(p.call, p.now, p.deadline, p.budget)
            : undefined;
        if (again === undefined) p.reject(error);
        else again.then(p.resolve, p.reject);
      }
    }
  }
}
