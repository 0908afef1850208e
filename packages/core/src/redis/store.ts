import { FloodgateError } from '../errors.js';
import type { LeaseGrant, LeaseRef, LeaseRequest, LeaseStore } from '../lease-types.js';
import { checkOptions } from '../options.js';
import type { OverrideStore } from '../override-store.js';
import type { PolicyState } from '../policies/common.js';
import type { PolicyResult, Store, StoreCall, StoreChange } from '../store-types.js';
import { Batcher, checkBatch } from './batch.js';
import {
  type ChangeFeed,
  changeFeedFor,
  changeMessage,
  DEFAULT_CHANNEL,
  RESET_SOURCE,
} from './changes.js';
import { KeyOrder } from './key-order.js';
import { leaseCalls } from './lease.js';
import { type Again, defer, LoneSender } from './lone.js';
import { checkChanges, checkReplicas, OPTION_NAMES, type RedisStoreOptions } from './options.js';
import { overrideCalls } from './overrides.js';
import { ScriptRunner } from './runner.js';
import type { RedisTransport } from './transport.js';
import { BATCHED_IN_FLIGHT, LONE_IN_FLIGHT, SendWindow } from './window.js';

/**
 * The store every Redis client adapter is built from: a `RedisTransport` (how this client sends
 * a command) and the options. It checks the options, runs one `EVALSHA` per decision (`EVAL`
 * again after `NOSCRIPT`), batches the calls made while one is in flight when the transport can,
 * waits for replicas in strict mode, resets with one script run that deletes the keys and
 * announces the reset on the change feed (`changes`), and reports failures as `STORE_UNAVAILABLE`.
 * It has no `fallback`: core holds no in-process store, so an adapter adds one.
 * @example
 * A store for another Redis client: its transport, and a fallback for the limiter.
 * ```ts
 * import type { Store } from '@floodgate/core/store';
 * import { RedisStore, type RedisStoreOptions } from '@floodgate/core/redis';
 * import { MemoryStore } from '@floodgate/memory';
 *
 * interface MyClient { command(argv: string[]): Promise<unknown>; connected: boolean }
 * class MyRedisStore extends RedisStore {
 *   constructor(client: MyClient, options: RedisStoreOptions = {}) {
 *     super(
 *       {
 *         label: 'my-client',
 *         canBatch: true,
 *         send: (_firstKey, name, args) => client.command([name, ...args]),
 *         isReady: () => client.connected,
 *       },
 *       options,
 *     );
 *   }
 *   fallback(): Store {
 *     return new MemoryStore({ now: this.clockNow });
 *   }
 * }
 * ```
 * @public
 */
export class RedisStore implements Store, LeaseStore, OverrideStore {
  /** For metrics and traces (`Store.kind`); each client's store names itself. */
  readonly kind: string = 'redis';
  readonly remote = true;
  /** Set with `clock: 'client'` only: the limiter's blocked-key cache then runs on this clock. */
  readonly now?: () => number;
  /** The clock for the fallback store: the client clock, or `Date.now`. */
  protected readonly clockNow: () => number;
  readonly #transport: RedisTransport;
  readonly #rejectIfNotReady: boolean;
  readonly #runner: ScriptRunner;
  /** Decided here, once: undefined runs every call alone. */
  readonly #batcher: Batcher | undefined;
  /** Runs a call that goes alone, and checks its tick for a late write (lone.ts). */
  readonly #lone: LoneSender;
  readonly #order = new KeyOrder();
  /** The calls on the wire, and the ones waiting for a place (window.ts). */
  readonly #window: SendWindow;
  /** The `TIME` in flight while the offset to Redis's clock is not known yet. */
  #probe: Promise<void> | undefined;
  /** The lease script's calls (lease.ts), on this store's clock and runner. */
  readonly #leases: ReturnType<typeof leaseCalls>;
  /** The override script's calls (overrides.ts), on this store's clock and runner. */
  readonly #overrides: ReturnType<typeof overrideCalls>;
  /** The change feed's channel; undefined with `changes: false`. */
  readonly #channel: string | undefined;
  /** The subscriber side, when the transport can subscribe. */
  readonly #feed: ChangeFeed | undefined;

  constructor(transport: RedisTransport, options: RedisStoreOptions = {}) {
    const label = transport.label;
    if (typeof options !== 'object' || options === null) {
      throw new FloodgateError('INVALID_OPTION', `${label}: options must be an object`);
    }
    checkOptions(label, options, OPTION_NAMES);
    const clock = options.clock ?? 'server';
    if (clock !== 'server' && clock !== 'client') {
      throw new FloodgateError('INVALID_OPTION', `clock must be 'server' or 'client'`);
    }
    if (options.now !== undefined && typeof options.now !== 'function') {
      throw new FloodgateError('INVALID_OPTION', 'now must be a function returning ms');
    }
    this.#transport = transport;
    this.clockNow = options.now ?? Date.now;
    if (clock === 'client') this.now = this.clockNow;
    this.#rejectIfNotReady = options.rejectIfNotReady === true;
    const replicas = checkReplicas(options.replicas);
    const maxBatch = checkBatch(options.batch);
    if (replicas !== undefined && typeof transport.sendWithWait !== 'function') {
      throw new FloodgateError(
        'INVALID_OPTION',
        `${label}: replicas (strict mode) is not supported`,
      );
    }
    this.#runner = new ScriptRunner(transport, replicas, this.clockNow);
    // Strict mode pairs each script run with its own WAIT: never batched. Nor is a cluster
    // client's: the keys of one script must share a slot.
    this.#lone = new LoneSender(this.#runner, this.#sentLate, this.#again);
    this.#batcher =
      maxBatch > 0 && replicas === undefined && transport.canBatch
        ? new Batcher(maxBatch, this.#runner, this.#sentLate, this.#lone, this.#again)
        : undefined;
    // A batching store's calls share runs; a cluster client's go one run each (window.ts).
    this.#window = new SendWindow(
      (call, deadline, now, budget) =>
        this.#dispatch(call, deadline, now === null ? this.#clock() : now, budget),
      this.#batcher === undefined ? LONE_IN_FLIGHT : BATCHED_IN_FLIGHT,
    );
    this.#leases = leaseCalls(this.#runner, () => this.#clock());
    this.#overrides = overrideCalls(this.#runner, () => this.#clock());
    this.#channel = checkChanges(options.changes, DEFAULT_CHANNEL);
    this.#feed =
      this.#channel !== undefined && typeof transport.subscribe === 'function'
        ? changeFeedFor(transport, this.#channel)
        : undefined;
  }

  /**
   * Tells `listener` of resets (and other changes) published by any process on the change feed
   * (`Store.watch`); the first listener of the stores on this client opens the subscriber
   * connection (one per client and channel), the last one to stop closes it. Without a feed (`changes: false`, or a client that cannot subscribe) it never
   * calls `listener`, and the caches fall back to their staleness bound.
   * @beta
   */
  watch(listener: (change: StoreChange) => void): () => void {
    return this.#feed === undefined ? () => {} : this.#feed.watch(listener);
  }

  /**
   * Publishes that the identity of `firstKey` changed, for a write that could not announce itself
   * in its own script. Never rejects: a lost announcement leaves the caches to their bound.
   */
  #announce(firstKey: string): void {
    if (this.#channel === undefined) return;
    this.#runner
      .command(firstKey, 'PUBLISH', [this.#channel, changeMessage(firstKey)])
      .catch(() => {});
  }

  /** The client clock's now (checked), or undefined on the server clock; and the ready check. */
  #clock(): number | undefined {
    let now: number | undefined;
    if (this.now !== undefined) {
      now = this.now();
      if (!Number.isSafeInteger(now) || now < 0) {
        throw new FloodgateError('INVALID_OPTION', `now() must return integer ms, got ${now}`);
      }
    }
    if (this.#rejectIfNotReady && !this.#transport.isReady()) {
      throw new FloodgateError(
        'STORE_UNAVAILABLE',
        `Redis (${this.#transport.label}) is not ready`,
      );
    }
    return now;
  }

  /** One run of the lease script (a sorted set per identity): see `LeaseStore`. */
  async acquireLease(request: LeaseRequest): Promise<LeaseGrant> {
    return this.#leases.acquire(request);
  }

  /** One run of the lease script: removes this lease's members only. */
  async releaseLease(lease: LeaseRef): Promise<boolean> {
    return this.#leases.release(lease);
  }

  /** One run of the lease script: a live lease's members get the new expiry. */
  async extendLease(lease: LeaseRef, leaseMs: number): Promise<boolean> {
    return this.#leases.extend(lease, leaseMs);
  }

  /**
   * One run of the override script: sets (expiring at its until) or deletes each key, then tells
   * the change feed, as a reset does, so other processes' cached denials go.
   * @beta
   */
  async writeOverrides(
    keys: readonly string[],
    states: readonly (PolicyState | null)[],
  ): Promise<void> {
    await this.#overrides.write(keys, states);
    if (keys.length > 0) this.#announce(keys[0]!);
  }

  /**
   * One run of the override script: each key's override in force, undefined for none.
   * @beta
   */
  readOverrides(keys: readonly string[]): Promise<readonly (PolicyState | undefined)[]> {
    return this.#overrides.read(keys);
  }

  /** One decision: one `EVALSHA` of the call's script, or its share of a batch's. */
  evaluate(call: StoreCall): Promise<readonly PolicyResult[]> {
    const keys = call.keys;
    const barrier = this.#order.barrier(keys);
    let work: Promise<readonly PolicyResult[]>;
    // A limiter's timeoutMs, counted from when the call is sent (window.ts), not from here.
    const budget = call.extendable === true ? call.deadline! - performance.now() : undefined;
    if (barrier === undefined && (this.#runner.offset.known || !this.#needsOffset(call))) {
      // Nearly every call: nothing to wait for, so it goes on without an async function's
      // promise and microtask hop. What it throws rejects, as from the async path.
      try {
        work = this.#window.submit(call, this.#clock(), budget);
      } catch (error) {
        work = Promise.reject(error);
      }
    } else {
      work = this.#evaluate(call, barrier, budget);
    }
    const tracked = this.#order.track(work, keys);
    return call.mode === 'refund' || call.mode === 'settle'
      ? this.#afterRefund(tracked, keys[0]!)
      : tracked;
  }

  /**
   * A refund that found the identity denied (its results are the state before it) may have made
   * a denial cached by other processes too strict: announced, after the refund. A refund of an
   * identity that was admitting is not (with `skipSuccessfulRequests` that is most of them, and
   * each announcement reaches every process), nor is any refund in its own script: the generated
   * limit scripts stay the same with or without the feed.
   */
  #afterRefund(
    work: Promise<readonly PolicyResult[]>,
    firstKey: string,
  ): Promise<readonly PolicyResult[]> {
    if (this.#channel === undefined) return work;
    return work.then((results) => {
      if (results.some((r) => !r.allowed)) this.#announce(firstKey);
      return results;
    });
  }

  /** Whether the call's deadline goes to Redis, which needs the offset to Redis's clock. */
  #needsOffset(call: StoreCall): boolean {
    return call.deadline !== undefined && call.mode !== 'peek';
  }

  /** The call after a reset of its keys, or the first with a deadline: it waits for them. */
  async #evaluate(
    call: StoreCall,
    barrier: Promise<unknown> | undefined,
    budget: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    const now = this.#clock();
    // A call that waits for the store's first TIME waits as a held call does (window.ts
    // `waitBefore`): nothing else is answered meanwhile, so that TIME's answer is what its wait
    // counts from. Behind a reset alone it keeps its own deadline: other keys' answers say
    // nothing of the reset's node (on a cluster, a master that died).
    const waited = budget !== undefined && this.#needsOffset(call) && !this.#runner.offset.known;
    if (waited) this.#window.waitBefore(call, budget);
    try {
      if (barrier !== undefined) await barrier;
      // One TIME for all the calls waiting to know the clock: they then go on in one tick, in
      // one batch, instead of one TIME each and batches split by when each TIME came back.
      if (this.#needsOffset(call) && !this.#runner.offset.known) {
        await this.#sharedProbe(call.keys[0]!);
      }
    } catch (error) {
      if (waited) this.#window.abandon(call);
      throw error;
    }
    return this.#window.submit(call, now, budget, waited);
  }

  /**
   * The instant the caller of `call` stops waiting: its own deadline, or a later one when the
   * store held it back while busy (window.ts). The limiter's timer asks when it fires.
   * @beta
   */
  waitUntil(call: StoreCall): number | undefined {
    return this.#window.waitUntil(call);
  }

  /** Sends the call (`local`, its deadline, on Redis's clock), batched when the store batches. */
  #dispatch(
    call: StoreCall,
    local: number | undefined,
    now: number | undefined,
    budget: number | undefined,
  ): Promise<readonly PolicyResult[]> {
    const deadline =
      local !== undefined && this.#needsOffset(call)
        ? this.#runner.offset.toRedis(local)
        : undefined;
    // A call migrating keys from 0.1, or with per-policy costs (a settle), runs alone: the batch
    // script holds neither.
    if (this.#batcher !== undefined && call.migrate === undefined && call.costs === undefined) {
      return this.#batcher.submit(call, now, deadline, local ?? Number.POSITIVE_INFINITY, budget);
    }
    return this.#lone.submit(call, now, deadline, local ?? Number.POSITIVE_INFINITY, budget);
  }

  readonly #sentLate = (call: StoreCall, until: number, at: number): void => {
    this.#window.sentLate(call, until, at);
  };

  /**
   * A call Redis refused as late while its caller still waits (lone.ts `Again`): its deadline
   * was spent by this process, not by the store (made at the start of a long tick and written
   * after it by a client that writes on a later tick; or sent on a clock offset learnt from a
   * reply read late, which reads Redis's clock low). Refused, it charged nothing; sent once more
   * as any call is sent (window.ts), its caller's timeoutMs from now when it asks `waitUntil`
   * (`budget`), on the offset the refusal's own `TIME` taught: still a lower bound, so the
   * guarantee holds, it charges only while its caller waits. With the caller's old deadline
   * instead, a burst whose replies this process read late (every sample of the offset low by
   * as much) was refused a second time: a fresh store's first wire of 1 024 calls to the
   * fallback. Once: a second refusal stands.
   */
  readonly #again: Again = (call, now, refused, budget) => {
    let until = this.#window.waitUntil(call);
    const at = performance.now();
    // A caller that has given up is never sent anything.
    if (until === undefined || at >= until) return undefined;
    if (budget !== undefined && at + budget > until) {
      until = at + budget;
      this.#window.sentLate(call, until, at);
    }
    const deadline = this.#runner.offset.toRedis(until);
    return deadline > refused ? this.#runner.one(call, now, deadline) : undefined;
  };

  /** The `TIME` in flight, or a new one; forgotten once settled (a failed one is tried again). */
  #sharedProbe(firstKey: string): Promise<void> {
    if (this.#probe === undefined) {
      const probe = this.#probeTime(firstKey);
      this.#probe = probe;
      // Handed over in a tick that ran long (a burst made in one loop), it was written late by a
      // client that writes on a later tick, and read late by any: the store was silent no longer
      // than since then (window.ts `busyUntil`).
      const handed = performance.now();
      defer(() => {
        const at = performance.now();
        if (at > handed + 1) this.#window.busyUntil(at);
      });
      const forget = () => {
        if (this.#probe === probe) this.#probe = undefined;
        // Its waiters go on before the next tick: together, in one batch.
        this.#batcher?.hold();
      };
      probe.then(forget, forget);
    }
    return this.#probe;
  }

  /** One `TIME`, before the first call with a deadline: a deadline needs Redis's clock. */
  async #probeTime(firstKey: string): Promise<void> {
    const reply = await this.#runner.command(firstKey, 'TIME', []);
    const received = performance.now();
    this.#window.heard(received);
    if (!Array.isArray(reply) || reply.length !== 2) {
      throw new FloodgateError('STORE_PROTOCOL', 'unexpected reply to TIME');
    }
    this.#runner.offset.sample(
      Number(reply[0]) * 1000 + Math.floor(Number(reply[1]) / 1000),
      received,
    );
  }

  /**
   * One script run that deletes the keys and publishes the reset on the change feed (a plain
   * `DEL` with `changes: false`), after the calls on the keys made before it (see `KeyOrder`).
   */
  reset(keys: readonly string[]): Promise<void> {
    if (keys.length === 0) return Promise.resolve();
    const argv = keys.slice();
    const channel = this.#channel;
    return this.#order.reset(argv, async () => {
      // All keys of one identity share a hash tag: one command, one slot.
      if (channel === undefined) await this.#runner.command(argv[0]!, 'DEL', argv);
      else {
        // EVAL, not EVALSHA: a reset is rare, and the script text is short.
        const args = [RESET_SOURCE, String(argv.length), ...argv, channel, changeMessage(argv[0]!)];
        await this.#runner.command(argv[0]!, 'EVAL', args);
      }
    });
  }
}
