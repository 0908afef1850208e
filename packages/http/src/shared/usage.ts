// The usage meter of a request (`usageOf`): what its handler reports it used, read by every
// `rateLimit` with `settle` on the request when its response is done (reservations.ts).
import { type Cost, FloodgateError } from '@floodgate/core';
import type { RequestUsage } from './settle-types.js';
import { createSlot } from './slot.js';

const invalid = (message: string): FloodgateError => new FloodgateError('INVALID_COST', message);

function units(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) {
    throw invalid(`${what} must be a safe integer ≥ 0, got ${String(value)}`);
  }
  return value;
}

/** A copy of `value` checked as a usage report: a number, or a record of numbers. */
function checked(value: unknown, method: string): Cost {
  if (typeof value !== 'object' || value === null) return units(value, `${method}()`);
  if (Array.isArray(value)) throw invalid(`${method}() takes a number or a record of numbers`);
  const copy: Record<string, number> = {};
  for (const name of Object.keys(value)) {
    copy[name] = units((value as Record<string, unknown>)[name], `${method}().${name}`);
  }
  return copy;
}

/** One request's meter; `register` counts a middleware that will settle from it. */
export class Meter implements RequestUsage {
  #reported: Cost | undefined = undefined;
  #pending = 0;
  #closed = false;
  #settled: Promise<void> | undefined;
  #resolve: (() => void) | undefined;

  add(units: Cost): void {
    const add = checked(units, 'add');
    if (this.#closed) return;
    const now = this.#reported;
    if (now === undefined) this.#reported = add;
    else if (typeof now === 'number' && typeof add === 'number') this.#reported = now + add;
    else if (typeof now === 'object' && typeof add === 'object') {
      const sum: Record<string, number> = { ...now };
      for (const name of Object.keys(add)) sum[name] = (sum[name] ?? 0) + (add[name] as number);
      this.#reported = sum;
    } else {
      throw invalid('add() a number to a number report, a record to a record report');
    }
  }

  report(actual: Cost): void {
    const value = checked(actual, 'report');
    if (!this.#closed) this.#reported = value;
  }

  get reported(): Cost | undefined {
    const now = this.#reported;
    // A copy: what a settle function is given cannot change the meter.
    return typeof now === 'object' ? { ...now } : now;
  }

  get settled(): Promise<void> {
    if (this.#pending === 0) return Promise.resolve();
    if (this.#settled === undefined) {
      this.#settled = new Promise((resolve) => {
        this.#resolve = resolve;
      });
    }
    return this.#settled;
  }

  /** One more settlement to wait for; call what it returns once that one is done. */
  register(): () => void {
    this.#pending++;
    this.#closed = false;
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (--this.#pending > 0) return;
      this.#closed = true;
      const resolve = this.#resolve;
      this.#settled = undefined;
      this.#resolve = undefined;
      resolve?.();
    };
  }
}

// On the framework's own request object (`RateLimitRequest.raw`), as the ledger keeps decisions.
const meters = createSlot<Meter>('floodgate.usage');

/** The request's meter, made by the first middleware that settles it. */
export function meterOf(raw: unknown): Meter {
  if ((typeof raw !== 'object' && typeof raw !== 'function') || raw === null) return new Meter();
  let meter = meters.get(raw);
  if (meter === undefined) {
    meter = new Meter();
    meters.set(raw, meter);
  }
  return meter;
}

/**
 * The usage meter of a request admitted by a `rateLimit` with `settle`, for its handler to
 * report what the request really used; `undefined` when no such middleware admitted it with a
 * reservation. Pass the framework's request object: Express / node:http `req`, Fastify
 * `request`, Hono's `Context`, or the fetch `Request`.
 * @example
 * An Express route streaming a model's answer, charged the tokens it really sent.
 * ```ts
 * import type { Limiter } from '@floodgate/core';
 * import { usageOf } from '@floodgate/http';
 * import { rateLimit } from '@floodgate/http/express';
 * import express from 'express';
 *
 * declare const limiter: Limiter; // policies named 'requests' and 'tokens'
 * declare function complete(prompt: string): AsyncIterable<{ text: string; tokens: number }>;
 * const app = express();
 * app.post(
 *   '/chat',
 *   rateLimit({ limiter, cost: { requests: 1, tokens: 4_096 }, settle: true }),
 *   async (req, res) => {
 *     const usage = usageOf(req);
 *     for await (const chunk of complete(String(req.query.q))) {
 *       usage?.add({ tokens: chunk.tokens });
 *       res.write(chunk.text);
 *     }
 *     res.end();
 *   },
 * );
 * ```
 * @beta
 */
export function usageOf(request: object): RequestUsage | undefined {
  return meters.get(request);
}
