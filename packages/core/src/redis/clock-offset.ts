/**
 * Maps this process's `performance.now()` onto Redis `TIME`. Each sample (a Redis time and when
 * its reply arrived here) gives `redis - local`, low by the reply's trip back and by any wait
 * before this process read it: every sample is a lower bound of the true offset, so a deadline
 * sent to Redis falls early, never late, and a script that might run after its caller gave up
 * refuses to charge. The largest recent sample is kept: the one whose reply came back fastest.
 * (Keeping the smallest let one reply read late, behind a busy event loop, move every deadline
 * that much earlier for up to 20 s: with a 250 ms timeout, a 300 ms pause made every script of
 * the next seconds refuse as late.) Samples age out over two periods, so a server clock that
 * steps is followed within `PERIOD_MS * 2`.
 */
export class ClockOffset {
  static readonly PERIOD_MS = 10_000;
  #previous = Number.NEGATIVE_INFINITY;
  #current = Number.NEGATIVE_INFINITY;
  #periodEnd = 0;

  get known(): boolean {
    return Number.isFinite(Math.max(this.#previous, this.#current));
  }

  sample(redisMs: number, localMs: number): void {
    if (localMs >= this.#periodEnd) {
      this.#previous = this.#current;
      this.#current = Number.NEGATIVE_INFINITY;
      this.#periodEnd = localMs + ClockOffset.PERIOD_MS;
    }
    const offset = redisMs - localMs;
    if (offset > this.#current) this.#current = offset;
  }

  /** The Redis time, in whole ms, no later than the local instant `localMs`. */
  toRedis(localMs: number): number {
    return Math.floor(localMs + Math.max(this.#previous, this.#current));
  }
}
