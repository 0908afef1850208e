// How long a concurrency limiter's slots are really held, for the wait a denial announces. The
// store can only say when the live leases *expire* (leaseMs after their grant): for a 1-minute
// lease on 1.5 s requests that is 40 times too long, and a client told "60 s" stays away for
// nothing. What the holders of this limiter did lately is the better guess.

/** Hold times remembered: enough to ride out one odd request, few enough to follow a change. */
const KEPT = 32;
/** The shortest wait announced: `Retry-After` has whole seconds, and 0 would invite a stampede. */
export const WAIT_FLOOR_MS = 1000;

/** The last `KEPT` hold times of one limiter, and the wait they suggest. */
export class HoldTimes {
  readonly #ring = new Float64Array(KEPT);
  #count = 0;
  #next = 0;

  /** One lease ended after `ms` (from its grant to its release; at most leaseMs, see below). */
  record(ms: number): void {
    this.#ring[this.#next] = ms;
    this.#next = (this.#next + 1) % KEPT;
    if (this.#count < KEPT) this.#count++;
  }

  /**
   * The wait to announce to a denial whose store said `boundMs` (when enough leases expire):
   * the longest recent hold time, rounded up to the ms, at least `WAIT_FLOOR_MS`, never above
   * `boundMs`. The longest rather than the mean: a client told too little comes back to
   * another denial, so a guess should err long; and it is still bounded by what holders did.
   * Without a hold time yet, `boundMs`.
   */
  wait(boundMs: number): number {
    if (this.#count === 0) return boundMs;
    let longest = 0;
    for (let i = 0; i < this.#count; i++) longest = Math.max(longest, this.#ring[i]!);
    return Math.min(boundMs, Math.max(WAIT_FLOOR_MS, Math.ceil(longest)));
  }
}
