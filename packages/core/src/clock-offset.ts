/**
 * Maps this process's `performance.now()` onto Redis `TIME`. Each sample (a Redis time and when
 * its reply arrived here) gives `redis - local`, low by the reply's trip back; the smallest
 * recent sample is kept, so a deadline sent to Redis falls early rather than late: a script that
 * might run after its caller gave up refuses to charge. Samples age out over two periods, so a
 * server clock that steps forward is followed within `PERIOD_MS * 2`.
 */
export class ClockOffset {
  static readonly PERIOD_MS = 10_000;
  #previous = Number.POSITIVE_INFINITY;
  #current = Number.POSITIVE_INFINITY;
  #periodEnd = 0;

  get known(): boolean {
    return Number.isFinite(Math.min(this.#previous, this.#current));
  }

  sample(redisMs: number, localMs: number): void {
    if (localMs >= this.#periodEnd) {
      this.#previous = this.#current;
      this.#current = Number.POSITIVE_INFINITY;
      this.#periodEnd = localMs + ClockOffset.PERIOD_MS;
    }
    const offset = redisMs - localMs;
    if (offset < this.#current) this.#current = offset;
  }

  /** The Redis time, in whole ms, no later than the local instant `localMs`. */
  toRedis(localMs: number): number {
    return Math.floor(localMs + Math.min(this.#previous, this.#current));
  }
}
