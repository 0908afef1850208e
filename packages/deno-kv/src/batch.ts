// Decisions of one identity queued in this process while its previous read and commit were in
// flight, decided together: one read of every key they use, each decided in turn on the state
// the one before it left (all at one instant, as if they came in the same millisecond), and
// one commit of the final states. Linearizable as one step at the commit; a batch never holds
// more checked keys than one atomic operation takes.
import {
  evaluateAll,
  type PolicyResult,
  type PolicyState,
  type StateWrite,
  type StoreCall,
} from '@floodgate/core/store';
import { decodeState, encodeState } from './codec.js';
import type { DenoKvEntry, DenoKvKey } from './kv-types.js';
import type { Write } from './transact.js';

/** Most decisions one batch carries: a bound on the time one commit's deciding takes. */
const MAX_BATCH = 256;

/** One decision waiting in its identity's lane. */
export interface Batched {
  readonly kind: 'eval';
  readonly call: StoreCall;
  /** The Deno KV key of each of the call's keys. */
  readonly keys: readonly DenoKvKey[];
  /** The call's key i is read but not checked (an override key). */
  readonly unchecked: (i: number) => boolean;
  readonly deadline: number | undefined;
  readonly resolve: (results: PolicyResult[]) => void;
  readonly reject: (error: unknown) => void;
}

/** Takes from the queue's front the decisions that go together (stops at other work). */
export function takeBatch(queue: { readonly kind: string }[], maxChecks: number): Batched[] {
  const batch: Batched[] = [];
  const checked = new Set<string>();
  while (batch.length < MAX_BATCH && queue[0]?.kind === 'eval') {
    const job = queue[0] as Batched;
    const add = job.call.keys.filter((k, i) => !job.unchecked(i) && !checked.has(k));
    if (batch.length > 0 && checked.size + add.length > maxChecks) break;
    queue.shift();
    batch.push(job);
    for (const k of add) checked.add(k);
  }
  return batch;
}

/** Every key the batch reads, once, in first-use order; checked unless no call checks it. */
export function unionOf(jobs: readonly Batched[]) {
  const index = new Map<string, number>();
  const keys: DenoKvKey[] = [];
  const unchecked: boolean[] = [];
  for (const job of jobs) {
    job.call.keys.forEach((k, i) => {
      const at = index.get(k);
      if (at === undefined) {
        index.set(k, keys.length);
        keys.push(job.keys[i]!);
        unchecked.push(job.unchecked(i));
      } else if (!job.unchecked(i)) {
        unchecked[at] = false;
      }
    });
  }
  return { index, keys, unchecked };
}

/** The batch decided on `entries` at `now`: each call's results, the writes, who wrote. */
export function decideBatch(
  jobs: readonly Batched[],
  index: ReadonlyMap<string, number>,
  entries: readonly DenoKvEntry[],
  now: number,
  marginMs: number,
): { results: PolicyResult[][]; writes: Write[]; writers: Batched[] } {
  const states = new Map<number, PolicyState | undefined>();
  const state = (at: number) => {
    if (!states.has(at)) states.set(at, decodeState(entries[at]!.value, now));
    return states.get(at);
  };
  const finals = new Map<number, NonNullable<StateWrite> | null>();
  const results: PolicyResult[][] = [];
  const writers: Batched[] = [];
  for (const job of jobs) {
    const at = job.call.keys.map((k) => index.get(k)!);
    const out = evaluateAll(job.call, at.map(state), now);
    let wrote = false;
    out.writes.forEach((w, i) => {
      if (w === undefined) return;
      wrote = true;
      states.set(at[i]!, w === null ? undefined : w.state);
      finals.set(at[i]!, w);
    });
    if (wrote) writers.push(job);
    results.push(out.results);
  }
  const writes: Write[] = [];
  for (const [at, w] of finals) {
    writes.push(
      w === null
        ? { at, value: null, expireIn: 0 }
        : { at, value: encodeState(w.state, now + w.ttlMs), expireIn: w.ttlMs + marginMs },
    );
  }
  return { results, writes, writers };
}
