// What a framework and the app say about proxies and routing, in a file of its own: the request
// type (shared/types.ts) carries it, and the keys (keys/ip.ts, keys/route.ts) read it, so neither
// side imports the other back.

/**
 * `(address, hop)` → trust this hop? `hop` 0 is the socket peer.
 * @example
 * Trust the socket peer only when it is the local reverse proxy.
 * ```ts
 * import { ipKey, type TrustFunction } from '@floodgate/http';
 *
 * const nearestProxy: TrustFunction = (address, hop) => hop === 0 && address === '127.0.0.1';
 * const key = ipKey({ trustProxy: nearestProxy });
 * ```
 * @public
 */
export type TrustFunction = (address: string, hop: number) => boolean;

/**
 * Which proxies in front of the server may speak for the client through `X-Forwarded-For`, as in
 * Express: `true` (all), a hop count, CIDR ranges or the names `'loopback'`, `'linklocal'`,
 * `'uniquelocal'` (a list or a comma-separated string), or a function.
 * @example
 * ```ts
 * import { ipKey, type TrustProxy } from '@floodgate/http';
 *
 * // The load balancers on the private network may speak for the client.
 * const trustProxy: TrustProxy = ['loopback', '10.0.0.0/8'];
 * const key = ipKey({ trustProxy });
 * ```
 * @public
 */
export type TrustProxy = boolean | number | string | readonly string[] | TrustFunction;

/**
 * What the framework itself says about routing and proxies, passed by the adapters that have a
 * say (Express, Fastify) on `RateLimitRequest.framework`. `routeKey()` follows its routing rules
 * and `ipKey()` without a `trustProxy` of its own follows its proxy trust.
 * @example
 * An adapter of your own for a router that ignores case and trailing slashes.
 * ```ts
 * import type { FrameworkSettings } from '@floodgate/http/adapter';
 *
 * const framework: FrameworkSettings = {
 *   name: 'my-router',
 *   caseSensitive: false,
 *   strictRouting: false,
 *   trustProxy: 'loopback',
 * };
 * ```
 * @public
 */
export interface FrameworkSettings {
  /** For messages, e.g. `'Express'`. */
  readonly name: string;
  /** The framework's own trust setting (Express `trust proxy`, Fastify `trustProxy`). @default false */
  readonly trustProxy?: TrustProxy;
  /** Does `/Search` reach another handler than `/search`? @default false */
  readonly caseSensitive?: boolean;
  /** Does `/search/` reach another handler than `/search`? @default false */
  readonly strictRouting?: boolean;
}
