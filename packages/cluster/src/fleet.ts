import { FloodgateError, fixedWindow, type Policy } from '@floodgate/core';
import { checkOptions, type OptionNames } from '@floodgate/core/internal';
import type { StoreCall } from '@floodgate/core/store';
import type { ShardGuard } from './guard.js';
import { hash32 } from './rendezvous.js';
import type { Shard } from './shards.js';

/**
 * What `onMixedFleet` is told: other processes recorded, on these shards, a topology that
 * decides identities differently from this process, within the current minute (the records are
 * counted per epoch-aligned minute).
 * @example
 * ```ts
 * import { type MixedFleetEvent, ShardedStore } from '@floodgate/cluster';
 * import type { Store } from '@floodgate/core/store';
 *
 * declare const shards: Store[];
 * const page = (e: MixedFleetEvent) =>
 *   console.error(`limiter fleet is mixed on ${e.shards.map((s) => s.name).join(', ')}`);
 * const store = new ShardedStore(shards, { fleetCheck: { onMixedFleet: page } });
 * ```
 * @public
 */
export interface MixedFleetEvent {
  /** This process's topology (`ShardedStore.fingerprint`). */
  readonly fingerprint: string;
  /** The topology this process expects every other to record: its own, or the migration's `from`. */
  readonly expected: string;
  /** Whether this process is inside a declared migration. */
  readonly migrating: boolean;
  /** Each shard where foreign records were seen, and how many (one per check of another process). */
  readonly shards: readonly { readonly name: string; readonly foreign: number }[];
  /** `Date.now()` of the check. */
  readonly at: number;
}

/**
 * The fleet check of {@link ShardedStoreOptions}: how often, and whom to tell.
 * @example
 * ```ts
 * import type { FleetCheckOptions } from '@floodgate/cluster';
 *
 * const fleetCheck: FleetCheckOptions = { intervalMs: 5_000, onMixedFleet: (e) => console.error(e) };
 * ```
 * @public
 */
export interface FleetCheckOptions {
  /**
   * How often each shard is checked, 10 to 15 000 ms. Records are counted per epoch-aligned
   * minute: a mixed fleet is seen within about a minute and an interval. @default 10_000
   */
  intervalMs?: number;
  /**
   * Called when a check finds a mixed fleet after a minute or more without one (once per
   * episode, not once per check); what it throws is ignored. @default a `console.warn` naming the shards and docs/cluster.md
   */
  onMixedFleet?: (event: MixedFleetEvent) => void;
}

const OPTION_NAMES = {
  intervalMs: true,
  onMixedFleet: true,
} as const satisfies OptionNames<FleetCheckOptions>;

const KEY = 'floodgate-fleet:{fleet}';
const MAX_RECORDS = 1_000_000;
/**
 * One window for every process, whatever its interval: records of windows of different lengths
 * under one key would overwrite each other. Four checks at the longest interval fit in it.
 */
const WINDOW_MS = 60_000;
const MAX_INTERVAL_MS = WINDOW_MS / 4;

/** A topology's fingerprint: the (name, weight) pairs, whatever their order. */
export function fingerprintOf(shards: readonly Shard[]): string {
  const text = JSON.stringify(
    shards.map((s) => [s.name, s.weight]).sort((a, b) => (a[0]! < b[0]! ? -1 : 1)),
  );
  const hex = (n: number) => n.toString(16).padStart(8, '0');
  return hex(hash32(text, 0x2f1d)) + hex(hash32(text, 0x6a09e667));
}

export function fleetOptions(value: unknown): Required<FleetCheckOptions> | undefined {
  if (value === false) return undefined;
  const given = value === undefined || value === true ? {} : value;
  if (typeof given !== 'object' || given === null) {
    throw new FloodgateError(
      'INVALID_OPTION',
      'ShardedStore: fleetCheck must be a boolean or options',
    );
  }
  checkOptions('ShardedStore: fleetCheck', given, OPTION_NAMES);
  const o = given as FleetCheckOptions;
  const intervalMs = o.intervalMs ?? 10_000;
  if (!Number.isSafeInteger(intervalMs) || intervalMs < 10 || intervalMs > MAX_INTERVAL_MS) {
    throw new FloodgateError(
      'INVALID_OPTION',
      `ShardedStore: fleetCheck.intervalMs must be an integer from 10 to ${MAX_INTERVAL_MS}`,
    );
  }
  if (o.onMixedFleet !== undefined && typeof o.onMixedFleet !== 'function') {
    throw new FloodgateError(
      'INVALID_OPTION',
      'ShardedStore: fleetCheck.onMixedFleet must be a function',
    );
  }
  return { intervalMs, onMixedFleet: o.onMixedFleet ?? warn };
}

function warn(e: MixedFleetEvent): void {
  console.warn(
    `[floodgate] ShardedStore: processes with another shard list use the same shards (${e.shards
      .map((s) => s.name)
      .join(', ')}): identities whose owner differs get each limit once per list. ` +
      (e.migrating
        ? 'This process migrates from one list; the others run neither it nor this one. '
        : 'Declare the change with the `migration` option on the new processes. ') +
      'See docs/cluster.md, "Changing the shard list".',
  );
}

/**
 * Each process records, on every shard, one check per interval under two counters of one
 * epoch-aligned window, both in one atomic call: one every process charges, and one for the
 * topology it claims (its own; during a migration, the old one, which it also decides by).
 * Where the shared counter is above this process's claimed one, someone claimed another topology
 * in this window. One call per shard per interval, never on a decision's path.
 */
export class FleetWatch {
  readonly #shards: readonly Shard[];
  readonly #guard: ShardGuard;
  readonly #options: Required<FleetCheckOptions>;
  readonly #policy: Policy;
  readonly #own: string;
  readonly #from: string | undefined;
  readonly #until: number;
  readonly #busy = new Set<number>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #lastSeen = Number.NEGATIVE_INFINITY;

  constructor(
    shards: readonly Shard[],
    guard: ShardGuard,
    options: Required<FleetCheckOptions>,
    own: string,
    migration: { from: string; until: number } | undefined,
  ) {
    this.#shards = shards;
    this.#guard = guard;
    this.#options = options;
    this.#own = own;
    this.#from = migration?.from;
    this.#until = migration?.until ?? 0;
    this.#policy = fixedWindow({ limit: MAX_RECORDS, window: WINDOW_MS });
  }

  start(): void {
    const tick = () => {
      this.check().then(
        (event) => {
          if (event === undefined) return;
          // One call per episode: a check early in a minute may find nothing yet although the
          // fleet is still mixed, so an episode ends only after a clean window and an interval.
          const quiet = WINDOW_MS + 2 * this.#options.intervalMs;
          if (event.at - this.#lastSeen > quiet) {
            try {
              this.#options.onMixedFleet(event);
            } catch {
              // A throwing listener must not stop the checks.
            }
          }
          this.#lastSeen = event.at;
        },
        () => {},
      );
    };
    this.#timer = setInterval(tick, this.#options.intervalMs);
    this.#timer.unref();
    setTimeout(tick, 0).unref();
  }

  stop(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One round over every remote shard: the event when another topology was recorded. */
  async check(): Promise<MixedFleetEvent | undefined> {
    const migrating = this.#from !== undefined && Date.now() < this.#until;
    const expected = migrating ? this.#from! : this.#own;
    // A migrating process also charges its own list's counter: once `until` has passed for the
    // processes whose clocks run ahead, they claim only the new list, and the records the others
    // made in the same minute must not look foreign to them.
    const claims = migrating ? [this.#from!, this.#own] : [this.#own];
    const keys = [`${KEY}:all`, ...claims.map((fp) => `${KEY}:${fp}`)];
    const call: StoreCall = {
      keys,
      policies: keys.map(() => this.#policy),
      cost: 1,
      // No deadline: a late record is still a record of this minute, and a shard still busy
      // with the last check is skipped rather than asked again.
      mode: 'limit',
    };
    const seen: ({ name: string; foreign: number } | undefined)[] = [];
    await Promise.all(
      this.#shards.map(async (shard, index) => {
        // A shard the decisions gave up on, or still busy with the last check, is skipped.
        if (shard.store.remote !== true || this.#guard.isOpen(index) || this.#busy.has(index)) {
          return;
        }
        this.#busy.add(index);
        try {
          const results = await shard.store.evaluate(call);
          const all = MAX_RECORDS - results[0]!.remaining;
          const mine = MAX_RECORDS - results[1]!.remaining;
          if (results.every((r) => r.allowed) && all > mine) {
            seen[index] = { name: shard.name, foreign: all - mine };
          }
        } catch {
          // The decisions report a failing shard; the check has nothing to add.
        } finally {
          this.#busy.delete(index);
        }
      }),
    );
    const found = seen.filter((s) => s !== undefined);
    if (found.length === 0) return undefined;
    return { fingerprint: this.#own, expected, migrating, shards: found, at: Date.now() };
  }
}
