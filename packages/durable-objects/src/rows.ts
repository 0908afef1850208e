// The object's storage: one SQLite table of rows (key, state as JSON, expiry on the decision
// clock, and when the row may be deleted on the object's own clock). SQLite-backed Durable
// Objects answer `sql.exec` synchronously, so a whole decision (read, decide, write) runs
// without yielding: nothing else can run on the object in between, and the runtime commits the
// writes as one transaction before the reply leaves (its output gate).

/** The parts of a Durable Object's `ctx.storage` the object uses (Workers' `DurableObjectStorage`). */
export interface ObjectStorage {
  readonly sql: {
    exec(query: string, ...bindings: (string | number | null)[]): Iterable<Record<string, unknown>>;
  };
  getAlarm(): Promise<number | null>;
  setAlarm(scheduledTime: number): Promise<void>;
  deleteAll(): Promise<void>;
}

/** A row as read: the state's JSON and its expiry on the decision clock. */
export interface Row {
  readonly v: string;
  readonly e: number;
}

const TABLE = 'floodgate_state';

// No index on g: the sweep scans the table once per interval, where an index would be one more
// row written on every decision (rows written cost a thousand times rows read on Cloudflare).
const CREATE = `CREATE TABLE IF NOT EXISTS ${TABLE} (k TEXT PRIMARY KEY, v TEXT NOT NULL, e INTEGER NOT NULL, g INTEGER NOT NULL) WITHOUT ROWID`;

// How long after its expiry a row written on the caller's clock (`clock: 'client'`) is kept:
// that clock may run behind the object's (a test holding it still), and a row deleted while it
// still says "live" there would forget usage the caller's clock still counts.
export const CLIENT_CLOCK_GRACE_MS = 60_000;

export class Rows {
  readonly #storage: ObjectStorage;
  readonly #sweepMs: number;
  /** Whether the table exists: unknown until asked, so reads on an empty object create nothing. */
  #table: boolean | undefined;
  /** The alarm set, null for none; undefined until read at start-up. */
  #alarmAt: number | null | undefined;
  readonly #selects = new Map<number, string>();
  readonly #deletes = new Map<number, string>();

  /** `sweepMs`: the least time between two runs of the alarm (`FloodgateObjectOptions`). */
  constructor(storage: ObjectStorage, sweepMs: number) {
    this.#storage = storage;
    this.#sweepMs = sweepMs;
  }

  /** Reads the alarm (call once, at start-up, before any other call is let in). */
  async start(): Promise<void> {
    this.#alarmAt = await this.#storage.getAlarm();
  }

  /** Whether the table exists; `create`: make it if not (a write is coming). */
  #has(create: boolean): boolean {
    if (this.#table === true || (this.#table === false && !create)) return this.#table;
    try {
      const sql = this.#storage.sql;
      if (create) {
        sql.exec(CREATE);
        this.#table = true;
      } else {
        const found = sql.exec(
          `SELECT name FROM sqlite_master WHERE type = 'table' AND name = ?`,
          TABLE,
        );
        this.#table = !(found[Symbol.iterator]().next().done ?? true);
      }
    } catch (cause) {
      throw new Error(
        'floodgateObject needs SQLite storage: list its class under new_sqlite_classes in the migration (wrangler)',
        { cause },
      );
    }
    return this.#table;
  }

  /** Runs a statement that returns no rows, to its end. */
  #run(query: string, ...bindings: (string | number)[]): void {
    const cursor = this.#storage.sql.exec(query, ...bindings)[Symbol.iterator]();
    while (cursor.next().done !== true) {
      // A write returns no rows: this loop only drives the statement to completion.
    }
  }

  /** The rows of `keys` that exist, expired or not. */
  read(keys: readonly string[]): Map<string, Row> {
    const n = keys.length;
    let q = this.#selects.get(n);
    if (q === undefined) {
      q = `SELECT k, v, e FROM ${TABLE} WHERE k IN (${placeholders(n)})`;
      this.#selects.set(n, q);
    }
    const out = new Map<string, Row>();
    if (!this.#has(false)) return out;
    for (const r of this.#storage.sql.exec(q, ...keys)) {
      out.set(r.k as string, { v: r.v as string, e: r.e as number });
    }
    return out;
  }

  /** The row's state when it is live at `now` (its expiry is after now). */
  live(key: string, now: number): string | undefined {
    const r = this.read([key]).get(key);
    return r !== undefined && r.e > now ? r.v : undefined;
  }

  /**
   * Writes `v` expiring at `e` on the decision clock (`now`). `client`: that clock is the
   * caller's, and the row is kept on the object's clock for as long, plus a grace.
   */
  write(key: string, v: string, e: number, now: number, client: boolean): void {
    const g = client ? Date.now() + Math.max(e - now, 0) + CLIENT_CLOCK_GRACE_MS : e;
    this.#has(true);
    this.#run(
      `INSERT INTO ${TABLE} (k, v, e, g) VALUES (?, ?, ?, ?) ON CONFLICT (k) DO UPDATE SET v = excluded.v, e = excluded.e, g = excluded.g`,
      key,
      v,
      e,
      g,
    );
    // One alarm per object, when the earliest row may go but not sooner than a sweep interval
    // from now (short-lived state would otherwise have it run, and be set again, every few ms):
    // moved only when that is earlier than the alarm set, so mostly once per interval.
    const when = Math.max(g, Date.now() + this.#sweepMs);
    const at = this.#alarmAt;
    if (at === undefined || at === null || when < at) {
      this.#alarmAt = when;
      void this.#storage.setAlarm(when);
    }
  }

  delete(keys: readonly string[]): void {
    const n = keys.length;
    if (n === 0 || !this.#has(false)) return;
    let q = this.#deletes.get(n);
    if (q === undefined) {
      q = `DELETE FROM ${TABLE} WHERE k IN (${placeholders(n)})`;
      this.#deletes.set(n, q);
    }
    this.#run(q, ...keys);
  }

  /**
   * The alarm: deletes the rows whose time has come, then sets the alarm for the next one, or,
   * with none left, deletes the object's whole storage so an idle identity costs nothing.
   */
  async sweep(): Promise<void> {
    this.#alarmAt = null;
    const now = Date.now();
    let next: number | null = null;
    if (this.#has(false)) {
      this.#run(`DELETE FROM ${TABLE} WHERE g <= ?`, now);
      for (const r of this.#storage.sql.exec(`SELECT MIN(g) AS g FROM ${TABLE}`)) {
        next = r.g as number | null;
      }
    }
    if (next === null) {
      this.#table = false;
      await this.#storage.deleteAll();
      return;
    }
    const when = Math.max(next, now + this.#sweepMs);
    this.#alarmAt = when;
    await this.#storage.setAlarm(when);
  }
}

function placeholders(n: number): string {
  return Array.from({ length: n }, () => '?').join(', ');
}
