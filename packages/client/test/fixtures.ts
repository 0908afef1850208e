import type { Decision, PolicyDecision } from '@floodgate/core';
import type { RetryEvent } from '../src/index.js';
import { withRetry } from '../src/index.js';
import { refuseFirst, type TestServer } from './server.js';

/** A denied policy with exact numbers, for core's formatRateLimitHeaders. */
export function denied(name: string, retryAfterMs: number, remaining = 0): PolicyDecision {
  return {
    name,
    kind: 'fixedWindow',
    allowed: remaining > 0,
    limit: 10,
    windowMs: 60_000,
    remaining,
    resetAfterMs: retryAfterMs,
    retryAfterMs: remaining > 0 ? 0 : retryAfterMs,
    delayMs: 0,
  };
}

const backMs = (p: PolicyDecision): number =>
  p.allowed ? p.resetAfterMs : Math.max(p.resetAfterMs, p.retryAfterMs);

/** A denied decision over `policies`, its binding chosen by the rule on `Decision.binding`. */
export function decision(policies: PolicyDecision[]): Decision {
  const binding = policies.reduce((b, p) =>
    p.remaining < b.remaining ||
    (p.remaining === b.remaining && p.limit === b.limit && backMs(p) > backMs(b))
      ? p
      : b,
  );
  return {
    allowed: false,
    limit: binding.limit,
    remaining: binding.remaining,
    resetAfterMs: Math.max(...policies.map((p) => p.resetAfterMs)),
    retryAfterMs: Math.max(...policies.map((p) => p.retryAfterMs)),
    delayMs: 0,
    policies,
    binding,
  };
}

/**
 * Serves one 429 with `headers`, and reports what the client made of it: the onRetry event of
 * the first retry. The hook aborts the call, so no test sits through the wait it reads.
 */
export async function firstRetry(
  server: TestServer,
  headers: Record<string, string>,
): Promise<RetryEvent> {
  server.handle = refuseFirst(headers);
  const controller = new AbortController();
  let event: RetryEvent | undefined;
  const client = withRetry(fetch, {
    jitter: 'none',
    maxDelayMs: 10 * 365 * 24 * 3600 * 1000,
    onRetry: (e) => {
      event = e;
      controller.abort(new Error('seen'));
    },
  });
  await client(`${server.url}/`, { signal: controller.signal }).catch(() => undefined);
  if (!event) throw new Error('the client did not retry');
  return event;
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const LONG_DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (n: number): string => String(n).padStart(2, '0');
const clock = (d: Date): string =>
  `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;

/** `Friday, 01-Mar-30 12:00:45 GMT` */
export function rfc850(ms: number): string {
  const d = new Date(ms);
  const yy = pad(d.getUTCFullYear() % 100);
  return `${LONG_DAYS[d.getUTCDay()]}, ${pad(d.getUTCDate())}-${MONTHS[d.getUTCMonth()]}-${yy} ${clock(d)} GMT`;
}

/** `Fri Mar  1 12:00:20 2030` */
export function asctime(ms: number): string {
  const d = new Date(ms);
  const day = String(d.getUTCDate()).padStart(2, ' ');
  return `${DAYS[d.getUTCDay()]} ${MONTHS[d.getUTCMonth()]} ${day} ${clock(d)} ${d.getUTCFullYear()}`;
}
