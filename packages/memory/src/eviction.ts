// The eviction order of a MemoryStore (CLOCK): every entry of every table on one list, oldest first.
import { Entry, SWEEP_GRACE_MS, type Table } from './entries.js';

/**
 * CLOCK over a doubly linked list threaded through the entries. An insert appends; the sweep
 * looks at the head: an entry expired past the grace minute goes, one read since it last came up
 * (`used`) gets a second chance at the tail, and past `max` an unused one is evicted.
 *
 * Every step is O(1) pointer work. Within the bound an insert looks at three heads at most; past
 * it, it goes on until one entry is evicted, so one insert may pass over many used entries, but
 * each pass clears a `used` that a read set: over any run, looks ≤ 3 × inserts + reads.
 *
 * Not a Map's own order: V8 keeps a deleted slot in a Map's backing store until it rehashes, and
 * an iterator starts at slot 0, so taking a Map's oldest entry after n deletions walks n slots.
 */
export class EvictionClock {
  #head: Entry | undefined = undefined;
  #tail: Entry | undefined = undefined;
  /** Entries held, in all tables. */
  size = 0;
  /** Entries the sweep has looked at, ever: the work tests bound per insert. */
  looks = 0;

  constructor(readonly max: number) {}

  /** A new entry for `id` in `table`; `since`: ms since the store's epoch, as entries count. */
  insert(table: Table, id: string, since: number): Entry {
    const e = new Entry(id, table);
    table.set(id, e);
    this.#append(e);
    this.size += 1;
    this.#sweep(e, since);
    return e;
  }

  /** Drops the identity's entry of `table`, if it holds one. */
  remove(table: Table, id: string): void {
    const e = table.get(id);
    if (e !== undefined) this.#drop(e);
  }

  #drop(e: Entry): void {
    e.table!.delete(e.id);
    this.#unlink(e);
    this.size -= 1;
  }

  #append(e: Entry): void {
    const tail = this.#tail;
    e.prev = tail;
    e.next = undefined;
    if (tail === undefined) this.#head = e;
    else tail.next = e;
    this.#tail = e;
  }

  #unlink(e: Entry): void {
    const { prev, next } = e;
    if (prev === undefined) this.#head = next;
    else prev.next = next;
    if (next === undefined) this.#tail = prev;
    else next.prev = prev;
    e.prev = undefined;
    e.next = undefined;
  }

  #sweep(added: Entry, since: number): void {
    for (let look = 0; ; look++) {
      const over = this.size > this.max;
      if (!over && look >= 3) return;
      // Never empty here: `added` is on the list.
      const e = this.#head!;
      this.looks += 1;
      if (e === added) {
        // Everything older was dropped or moved behind it. Within the bound, done; past it, the
        // entry about to be written stays, and the next head (its `used` now cleared) goes.
        if (!over) return;
        this.#unlink(e);
        this.#append(e);
      } else if (e.expiresAt + SWEEP_GRACE_MS <= since || (over && !e.used)) {
        this.#drop(e);
      } else if (e.used) {
        e.used = false;
        this.#unlink(e);
        this.#append(e);
      } else {
        // Live and unused within the bound: the entries behind it are younger, stop looking.
        return;
      }
    }
  }
}

/** Each store's clock, for tests that count the sweep's work; not exported by the package. */
export const evictionOf = new WeakMap<object, EvictionClock>();
