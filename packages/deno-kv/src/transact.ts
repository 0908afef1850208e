// Read, decide, check-and-set: the one loop behind every call of DenoKvStore. Deno KV has no
// scripts: a decision reads its keys, decides in this process (core's reference), and commits
// its writes in an atomic operation that checks every key it read still has the versionstamp it
// had. A failed check means another writer got in between: read again and decide again, at most
// `maxRetries` times. Within this process, calls on one identity queue behind each other (its
// lane), and the decisions queued meanwhile go together in the next read and commit (batch.ts):
// they never make each other's commits fail, and a hot identity costs one round trip per batch.
import { FloodgateError } from '@floodgate/core';
import type { PolicyResult } from '@floodgate/core/store';
import { type Batched, decideBatch, takeBatch, unionOf } from './batch.js';
import type { DenoKvAtomic, DenoKvEntry, DenoKvKey, DenoKvLike } from './kv-types.js';
import type { Settings } from './options.js';
import { BusyWait, conflictPause, isBusy, late, past, unavailable } from './retry.js';
import type { MutableStats } from './stats.js';

/** Deno KV's most keys per `getMany` and, with `@deno/kv`, most checks per atomic operation. */
export const MAX_KEYS_PER_OP = 10;

/** One key's write: its bytes and how long KV keeps them, or null to delete it. */
export interface Write {
  /** Index into the keys read. */
  readonly at: number;
  readonly value: Uint8Array | null;
  readonly expireIn: number;
}

/** One read-decide-commit transaction, tried until it commits. */
interface Txn {
  readonly keys: readonly DenoKvKey[];
  /** Key i is read but not checked (an override key: only blind writes ever change it). */
  unchecked(i: number): boolean;
  /** The writes that make the decision on `entries` stand (none: it stands on the read). */
  decide(entries: readonly DenoKvEntry[], now: number): readonly Write[];
  /** Before the commit: true if it may go ahead; false to decide again (calls were dropped). */
  onTime(): boolean;
  /** True once every caller has stopped waiting (past its deadline): no point trying again. */
  gone(): boolean;
}

type Job =
  | Batched
  | {
      readonly kind: 'solo';
      readonly run: () => Promise<unknown>;
      readonly resolve: (v: unknown) => void;
      readonly reject: (e: unknown) => void;
    };

export class Transactor {
  readonly #kv: DenoKvLike;
  readonly #settings: Settings;
  readonly stats: MutableStats = { commits: 0, conflicts: 0, busy: 0, exhausted: 0 };
  /** The jobs waiting per lane (an identity's first key); a lane is here while it runs. */
  readonly #lanes = new Map<string, Job[]>();

  constructor(kv: DenoKvLike, settings: Settings) {
    this.#kv = kv;
    this.#settings = settings;
  }

  /** The clock's now, checked as MemoryStore checks it. */
  now(): number {
    const now = this.#settings.now();
    if (!Number.isSafeInteger(now) || now < 0) {
      throw new FloodgateError(
        'INVALID_OPTION',
        `DenoKvStore: now() must return non-negative integer ms, got ${now}`,
      );
    }
    return now;
  }

  /** A decision, in its lane, batched with the decisions queued beside it. */
  evaluate(
    lane: string,
    job: Omit<Batched, 'kind' | 'resolve' | 'reject'>,
  ): Promise<PolicyResult[]> {
    return new Promise((resolve, reject) => {
      this.#enqueue(lane, { kind: 'eval', ...job, resolve, reject });
    });
  }

  /** Runs `fn` alone in `lane`: after the calls queued before it, before those after. */
  serial<T>(lane: string, fn: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#enqueue(lane, {
        kind: 'solo',
        run: fn,
        resolve: resolve as (v: unknown) => void,
        reject,
      });
    });
  }

  /** `decide` on one key, alone in `lane`, until its write commits (the lease steps). */
  run<T>(
    lane: string,
    key: DenoKvKey,
    deadline: number | undefined,
    decide: (entry: DenoKvEntry, now: number) => { result: T; write?: Write },
  ): Promise<T> {
    let result: T;
    return this.serial(lane, async () => {
      await this.#transact({
        keys: [key],
        unchecked: () => false,
        decide(entries, now) {
          const d = decide(entries[0]!, now);
          result = d.result;
          return d.write === undefined ? [] : [d.write];
        },
        onTime: () => {
          if (past(deadline)) throw late();
          return true;
        },
        gone: () => past(deadline),
      });
      return result!;
    });
  }

  #enqueue(lane: string, job: Job): void {
    const queue = this.#lanes.get(lane);
    if (queue !== undefined) {
      queue.push(job);
      return;
    }
    this.#lanes.set(lane, [job]);
    void this.#drain(lane);
  }

  async #drain(lane: string): Promise<void> {
    const queue = this.#lanes.get(lane)!;
    while (queue.length > 0) {
      const first = queue[0]!;
      if (first.kind === 'solo') {
        queue.shift();
        await first.run().then(first.resolve, first.reject);
        continue;
      }
      await this.#batch(takeBatch(queue, MAX_KEYS_PER_OP));
    }
    this.#lanes.delete(lane);
  }

  /** Decides `jobs` together and settles each: on a commit, a failure, or its deadline. */
  async #batch(jobs: Batched[]): Promise<void> {
    let live = jobs;
    let plan: ReturnType<typeof decideBatch> | undefined;
    try {
      const margin = this.#settings.marginMs;
      const union = unionOf(live);
      await this.#transact({
        keys: union.keys,
        unchecked: (i) => union.unchecked[i]!,
        decide(entries, now) {
          plan = decideBatch(live, union.index, entries, now, margin);
          return plan.writes;
        },
        onTime() {
          // A call whose caller has stopped waiting is not charged: it is answered with
          // STORE_TIMEOUT and the others are decided again without it.
          const lateOnes = plan!.writers.filter((j) => past(j.deadline));
          if (lateOnes.length === 0) return true;
          for (const j of lateOnes) j.reject(late());
          live = live.filter((j) => !lateOnes.includes(j));
          return false;
        },
        gone: () => live.every((j) => past(j.deadline)),
      });
      live.forEach((j, i) => {
        j.resolve(plan!.results[i]!);
      });
    } catch (error) {
      for (const j of live) j.reject(error);
    }
  }

  async #transact(t: Txn): Promise<void> {
    const busy = new BusyWait(this.#settings.busyTimeoutMs);
    for (let conflicts = 0; ; ) {
      let entries: readonly DenoKvEntry[];
      try {
        entries = await this.#read(t.keys);
      } catch (error) {
        if (!isBusy(error)) throw unavailable(error);
        await this.#busy(busy, t);
        continue;
      }
      const now = this.now();
      let writes = t.decide(entries, now);
      while (!t.onTime()) writes = t.decide(entries, now);
      // One getMany is one snapshot: an answer that writes nothing stands on it. Keys read in
      // several (more than 10) are made one snapshot by a commit that checks them.
      if (writes.length === 0 && t.keys.length <= MAX_KEYS_PER_OP) return;
      const op = this.#kv.atomic();
      entries.forEach((e, i) => {
        if (!t.unchecked(i)) op.check({ key: t.keys[i]!, versionstamp: e.versionstamp });
      });
      for (const w of writes) write(op, t.keys[w.at]!, w);
      let ok: boolean;
      try {
        ok = (await op.commit()).ok;
      } catch (error) {
        // SQLite reports a locked file before it has written anything: nothing was committed.
        if (!isBusy(error)) throw unavailable(error);
        await this.#busy(busy, t);
        continue;
      }
      if (ok) {
        this.stats.commits++;
        return;
      }
      this.stats.conflicts++;
      if (conflicts++ >= this.#settings.maxRetries) {
        throw this.#givenUp(`${conflicts} commits in a row lost to other writers`);
      }
      if (t.gone()) throw late();
      await conflictPause(conflicts);
    }
  }

  async #busy(busy: BusyWait, t?: Txn): Promise<void> {
    this.stats.busy++;
    if (t?.gone() === true) throw late();
    if (!(await busy.wait())) throw this.#givenUp('the database file stayed locked');
  }

  #givenUp(why: string): FloodgateError {
    this.stats.exhausted++;
    return new FloodgateError(
      'STORE_UNAVAILABLE',
      `DenoKvStore: ${why} (maxRetries ${this.#settings.maxRetries}, busyTimeoutMs ${this.#settings.busyTimeoutMs})`,
    );
  }

  async #read(keys: readonly DenoKvKey[]): Promise<readonly DenoKvEntry[]> {
    if (keys.length <= MAX_KEYS_PER_OP) return await this.#kv.getMany(keys);
    const out: DenoKvEntry[] = [];
    for (let i = 0; i < keys.length; i += MAX_KEYS_PER_OP) {
      out.push(...(await this.#kv.getMany(keys.slice(i, i + MAX_KEYS_PER_OP))));
    }
    return out;
  }

  /** Blind writes, no check (overrides, reset): in chunks of 1000, Deno KV's most mutations. */
  async blind(keys: readonly DenoKvKey[], writes: readonly Write[]): Promise<void> {
    for (let i = 0; i < writes.length; i += 1000) {
      const chunk = writes.slice(i, i + 1000);
      await this.#whileBusy(async () => {
        const op = this.#kv.atomic();
        for (const w of chunk) write(op, keys[w.at]!, w);
        // Without a check an atomic operation cannot fail one: not ok is the client's failure.
        if (!(await op.commit()).ok) throw new Error('a write without checks was not committed');
        this.stats.commits++;
      });
    }
  }

  /** `keys`' entries, for reads that decide nothing (overrides, `ttl`). */
  read(keys: readonly DenoKvKey[]): Promise<readonly DenoKvEntry[]> {
    return this.#whileBusy(() => this.#read(keys));
  }

  /** `fn`, again while it finds the SQLite file locked (up to busyTimeoutMs). */
  async #whileBusy<T>(fn: () => Promise<T>): Promise<T> {
    const busy = new BusyWait(this.#settings.busyTimeoutMs);
    for (;;) {
      try {
        return await fn();
      } catch (error) {
        if (!isBusy(error)) throw unavailable(error);
      }
      await this.#busy(busy);
    }
  }
}

function write(op: DenoKvAtomic, key: DenoKvKey, w: Write): void {
  // Deno KV takes a positive expireIn only (a zero margin on a state with nothing left).
  if (w.value === null) op.delete(key);
  else op.set(key, w.value, { expireIn: Math.max(1, w.expireIn) });
}
