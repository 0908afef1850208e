// A batch's entries (batch.lua, Repeats): which queued calls may go as one, the blocks of ARGV
// they name, and each call's answer in the batch script's reply.
import type { PolicyResult, StoreCall } from '../store-types.js';
import { fieldsPerPolicy, writeScriptArgs } from './protocol.js';
import { replayRepeats } from './replay.js';

/** A call queued for the next batch, and how its caller is answered. */
export interface Pending {
  readonly call: StoreCall;
  readonly now: number | undefined;
  deadline: number | undefined;
  /** When its caller stops waiting, on this host's clock (`Batcher.submit`). */
  until: number;
  /** Its timeoutMs, to run from when it is sent, for a caller that asks `waitUntil`. */
  readonly budget: number | undefined;
  resolve(results: readonly PolicyResult[]): void;
  reject(error: unknown): void;
}

/** Two queued calls that send the same KEYS and ARGV: a 'limit' of one policies array. */
export function sameCall(a: Pending, b: Pending, keys: number): boolean {
  if (
    a.call.policies !== b.call.policies ||
    a.call.mode !== 'limit' ||
    b.call.mode !== 'limit' ||
    a.call.cost !== b.call.cost ||
    a.call.costs !== undefined ||
    b.call.costs !== undefined ||
    a.now !== b.now ||
    a.deadline !== b.deadline
  ) {
    return false;
  }
  for (let i = 0; i < keys; i++) if (a.call.keys[i] !== b.call.keys[i]) return false;
  return true;
}

/** A call's answer: where its fields start in the reply, its nested entry, or its replay. */
export type Answer = number | unknown[] | { results: readonly PolicyResult[] };

/**
 * Each call's answer in batch.lua's reply: where its five fields per policy start, its nested
 * 'late' or 'error' entry, or its replayed decisions; undefined when the reply is not that shape
 * (or a replay disagrees with the script: it then charged calls this cannot answer exactly).
 */
export function readBatch(
  reply: readonly unknown[],
  group: readonly Pending[],
  firsts: readonly number[],
  counts: readonly number[],
): Answer[] | undefined {
  const first = group[0]!.call;
  const width = first.policies.length * fieldsPerPolicy(first.overrides);
  const end = reply.length - 1;
  const answers: Answer[] = [];
  let pos = 0;
  for (let e = 0; e < firsts.length; e++) {
    const n = counts[e]!;
    const item = reply[pos];
    if (n > 1 && Array.isArray(item) && String(item[0]) === 'rep') {
      const first = group[firsts[e]!]!;
      const now = first.now ?? Number(reply[end]);
      const out = replayRepeats(first.call, item.slice(1), now, n);
      if (out === undefined) return undefined;
      for (const results of out) answers.push({ results });
      pos += 1;
      continue;
    }
    for (let j = 0; j < n; j++) {
      if (pos >= end) return undefined;
      if (Array.isArray(reply[pos])) {
        answers.push(reply[pos] as unknown[]);
        pos += 1;
      } else {
        answers.push(pos);
        pos += width;
      }
    }
  }
  return pos === end ? answers : undefined;
}

/** A block's number as batch.lua reads it, for the first blocks of a run (most runs have one). */
const BLOCK_NAMES = Array.from({ length: 16 }, (_, i) => String(i + 1));
/** How many of the latest blocks a call's ARGV is compared with before it gets its own. */
const RECENT_BLOCKS = 4;

/**
 * Writes each entry's block number from `at` on, then the blocks after them (batch.lua, ARGV):
 * an entry whose one-call ARGV equals one of the last blocks written names that block, else its
 * ARGV becomes a new one. `args` ends with the last block.
 */
export function writeBlocks(
  args: string[],
  at: number,
  group: readonly Pending[],
  firsts: readonly number[],
  clock: () => number,
): void {
  const starts: number[] = [];
  let end = at + firsts.length;
  for (let e = 0; e < firsts.length; e++) {
    const p = group[firsts[e]!]!;
    const n = writeScriptArgs(args, end, p.call, p.now, p.deadline, clock);
    let block = 0;
    for (let b = starts.length - 1; b >= 0 && b >= starts.length - RECENT_BLOCKS; b--) {
      if (sameArgs(args, starts[b]!, end, n)) {
        block = b + 1;
        break;
      }
    }
    if (block === 0) {
      starts.push(end);
      end += n;
      block = starts.length;
    }
    args[at + e] = BLOCK_NAMES[block - 1] ?? String(block);
  }
  args.length = end;
}

function sameArgs(args: readonly string[], a: number, b: number, n: number): boolean {
  for (let i = 0; i < n; i++) if (args[a + i] !== args[b + i]) return false;
  return true;
}
