/**
 * Options of express-rate-limit, @fastify/rate-limit and hono-rate-limiter, each with what
 * takes its place here: someone coming from them meets "unknown option" with the way forward.
 */
const WINDOW =
  "the policy's `window` (or `interval`): `policy: fixedWindow({ limit: 100, window: '15m' })` with a `store`";
const LIMIT =
  "the policy's `limit`: `policy: fixedWindow({ limit: 100, window: '15m' })` with a `store`, or per request `policy: (request) => tierPolicy`";
const RESPONSE = '`onLimited: (context) => ({ status, headers, body })`';
const STORE_ERRORS =
  "the limiter's `onStoreError` (`'allow'` lets requests through when the store fails) and `onLimiterError: 'fail-open'`";

const HINTS: Readonly<Record<string, string>> = {
  windowMs: WINDOW,
  timeWindow: WINDOW,
  max: LIMIT,
  limit: LIMIT,
  points: LIMIT,
  duration: WINDOW,
  standardHeaders: "`headers: 'draft-6' | 'draft-7' | 'draft-8' | false`",
  enableDraftSpec: "`headers: 'draft-8'` (or 'draft-6', 'draft-7')",
  addHeaders: '`headers` and `legacyHeaders`',
  addHeadersOnExceeding: '`headers` and `legacyHeaders`',
  message: RESPONSE,
  statusCode: RESPONSE,
  handler: RESPONSE,
  errorResponseBuilder: RESPONSE,
  onExceeded: RESPONSE,
  onExceeding: RESPONSE,
  onLimitReached: RESPONSE,
  keyGenerator: '`key: (request) => string | undefined` (`ipKey()`, `headerKey(name)`, …)',
  requestPropertyName:
    "none needed, the decision is on `req.rateLimit` (Express, node), `request.rateLimit` (Fastify), `c.get('rateLimit')` (Hono) and `rateLimitOf(request)`",
  identifier: "the policy's `name`",
  ipv6Subnet: '`key: ipKey({ ipv6Prefix: 56 })`',
  passOnStoreError: STORE_ERRORS,
  skipOnError: STORE_ERRORS,
  redis: '`store: new IoRedisStore(redis)` from @floodgate/ioredis',
  cache: '`store: new MemoryStore({ maxKeys })` from @floodgate/memory',
  ban: "the policy's `blockFor`: `fixedWindow({ limit: 100, window: '1m', blockFor: '15m' })`",
  blockDuration:
    "the policy's `blockFor`: `fixedWindow({ limit: 100, window: '1m', blockFor: '15m' })`",
  hook: "Fastify's plugin only (`hook: 'onRequest' | 'preHandler'`); elsewhere the limit runs where the middleware is mounted",
  trustProxy: '`key: ipKey({ trustProxy })`',
};

/** `` (use …)`` naming the Floodgate way for a peer library's option, or `''`. */
export function peerOptionHint(name: string): string {
  const hint = Object.hasOwn(HINTS, name) ? HINTS[name] : undefined;
  return hint === undefined ? '' : ` (Floodgate's way: ${hint})`;
}
