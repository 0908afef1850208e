import type { RateLimitRequest } from '../shared/types.js';

/** `getAddress` as the fetch adapters call it: the request, then what the runtime passed after it. */
export type AddressOf = (request: Request, ...rest: unknown[]) => string | undefined;

/**
 * The request as keys see it. A class rather than a literal with a getter: made on every
 * request, and one shape with a prototype getter stays cheap for V8 and the GC. `address` is
 * asked of `getAddress` (with what the runtime passed after the request) when a key first reads
 * it, inside the decision, and kept.
 */
export class FetchView implements RateLimitRequest<Request> {
  readonly method: string;
  readonly path: string;
  readonly route: undefined;
  // An own function, as before: a key may take it off the view (`const { header } = request`).
  readonly header: (name: string) => string | undefined;
  readonly raw: Request;
  #getAddress: AddressOf | undefined;
  #rest: unknown[];
  #known = false;
  #address: string | undefined = undefined;

  constructor(request: Request, getAddress: AddressOf | undefined, rest: unknown[]) {
    this.method = request.method;
    this.path = new URL(request.url).pathname;
    this.route = undefined;
    this.header = (name) => request.headers.get(name) ?? undefined;
    this.raw = request;
    this.#getAddress = getAddress;
    this.#rest = rest;
  }

  get address(): string | undefined {
    if (!this.#known) {
      const getAddress = this.#getAddress;
      this.#address = getAddress?.(this.raw, ...this.#rest);
      this.#known = true;
    }
    return this.#address;
  }
}
