import type { AddressInfo } from 'node:net';
import type { Store } from '@floodgate/core/store';
import type { RateLimitOptions } from '../../src/index.js';

/** A running app: the routes every harness serves, behind the adapter under test. */
export interface AppHandle {
  /** `http://host:port`, IPv6 hosts bracketed. */
  readonly url: string;
  /** How many times a route handler ran: a denied or abandoned request must not reach one. */
  handled(): number;
  /** When each handler run started (`performance.now()`), in order. */
  handledAt(): readonly number[];
  close(): Promise<void>;
}

/**
 * Starts one framework on port 0 with the middleware configured by `options`. Every app serves
 * `GET /`, `GET /users/:id` and `GET /health`; each handler counts itself and sets
 * `Access-Control-Expose-Headers: X-Request-Id` (as CORS middleware would) before answering
 * `{"ok":true}`. `GET /decision` answers `{ decision }`: the decision the adapter exposes to
 * handlers (`req.rateLimit`, `request.rateLimit`, `c.get('rateLimit')`, `rateLimitOf(request)`).
 * `GET /fail` counts itself and answers a 500 (for `skipFailedRequests`).
 */
export interface Harness {
  readonly name: string;
  /** Whether the request view knows the matched route pattern (`/users/:id`). */
  readonly knowsRoute: boolean;
  start(options: RateLimitOptions, listen?: { host?: string }): Promise<AppHandle>;
  /**
   * An app with two limiters on `GET /login`: `outer` app-wide, `inner` on the route (as
   * frameworks stack them). The handler answers `{ decision }`, the decision the adapter exposes.
   */
  startStacked(outer: RateLimitOptions, inner: RateLimitOptions): Promise<AppHandle>;
  /** Builds the middleware only: for option validation. */
  build(options: RateLimitOptions): Promise<unknown>;
}

/** Where the suite's limiters keep state. */
export interface StoreFactory {
  readonly name: string;
  make(now?: () => number): Store;
}

export const EXPOSE_BY_APP = 'X-Request-Id';

export function urlOf(address: AddressInfo | string | null): string {
  if (address === null || typeof address === 'string') throw new Error('server is not on TCP');
  const host =
    address.family === 'IPv6' || address.address.includes(':')
      ? `[${address.address}]`
      : address.address;
  return `http://${host}:${address.port}`;
}

/** Counts handler runs and when they started. */
export function counter(): {
  hit: () => void;
  count: () => number;
  times: () => readonly number[];
} {
  const at: number[] = [];
  return { hit: () => void at.push(performance.now()), count: () => at.length, times: () => at };
}
