// The peer's modules as the bench Worker uses them. They are installed in the repository's
// bench/ package, not in this one: bench/run.ts bundles them from there (esbuild `nodePaths`),
// and these declarations stand in for their types, which TypeScript cannot reach from here.
declare module '@hono-rate-limiter/cloudflare' {
  /** One object per key: a fixed-window count in storage (get + put per call) and an alarm. */
  export class DurableObjectRateLimiter {}
  /** hono-rate-limiter's store: one RPC (`update`) to the key's object per `increment`. */
  export class DurableObjectStore {
    constructor(options: { namespace: unknown; prefix?: string });
    init(options: { windowMs: number }): void;
    increment(key: string): Promise<{ totalHits: number; resetTime?: Date }>;
  }
}

declare module 'hono-rate-limiter' {
  export function rateLimiter(config: {
    windowMs: number;
    limit: number;
    keyGenerator: (c: import('hono').Context) => string | Promise<string>;
    store: unknown;
  }): import('hono').MiddlewareHandler;
}
