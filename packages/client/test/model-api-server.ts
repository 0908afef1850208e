// A stand-in for a model API that enforces requests and tokens per "minute" (scaled down to a
// few seconds), as OpenAI and Anthropic do, and says so in their headers on every response.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { startServer, type TestServer } from './server.js';

export type Style = 'openai' | 'anthropic';
type Dim = 'requests' | 'tokens' | 'input' | 'output';

export interface ModelApiServerOptions {
  readonly style: Style;
  /** The limits' period, the providers' minute scaled down. */
  readonly periodMs: number;
  /** Limits per period. OpenAI: requests and tokens; Anthropic: requests, input and output. */
  readonly limits: Partial<Record<Dim, number>>;
  /** How far the server's clock runs ahead of this machine's (its Date and its instants). */
  readonly clockSkewMs?: number;
}

export interface ModelApiServer {
  readonly url: string;
  /** The status of every response, in order. */
  readonly statuses: number[];
  /** Per limit: everything admitted, and the smallest share of it left after an admission. */
  readonly charged: Record<Dim, number>;
  readonly lowestShare: Record<Dim, number>;
  /** Server-clock ms of the first and the last admission. */
  readonly span: { first: number; last: number };
  close(): Promise<void>;
}

interface Bucket {
  readonly limit: number;
  /** Refill per ms: the limit per period. */
  readonly rate: number;
  level: number;
  at: number;
}

/**
 * Token buckets, as both providers describe their limits ("continuously replenished up to your
 * maximum limit", Anthropic): each holds `limit`, refills `limit` per period, and a request is
 * admitted only if every bucket holds its cost; a refused one is charged nothing. A call costs
 * a request, a token per 4 characters of its body in, and its `max_tokens` out: the count
 * `estimateTokens` makes, so that the test is about pacing, not about estimating.
 */
export async function startModelApiServer(o: ModelApiServerOptions): Promise<ModelApiServer> {
  const now = (): number => Date.now() + (o.clockSkewMs ?? 0);
  const dims = Object.keys(o.limits) as Dim[];
  const buckets = new Map<Dim, Bucket>(
    dims.map((d) => {
      const limit = o.limits[d] as number;
      return [d, { limit, rate: limit / o.periodMs, level: limit, at: now() }];
    }),
  );
  const refill = (t: number): void => {
    for (const b of buckets.values()) {
      b.level = Math.min(b.limit, b.level + (t - b.at) * b.rate);
      b.at = t;
    }
  };
  const statuses: number[] = [];
  const charged = { requests: 0, tokens: 0, input: 0, output: 0 };
  const lowestShare = { requests: 1, tokens: 1, input: 1, output: 1 };
  const span = { first: Number.NaN, last: Number.NaN };
  let seen = 0;

  /** Decides on arrival, as a provider's gateway does; the answer comes `latencyMs` later. */
  const answer = (body: string, res: ServerResponse, latencyMs: number): void => {
    const t = now();
    refill(t);
    const input = Math.ceil(body.length / 4);
    const output = Number((JSON.parse(body) as { max_tokens: number }).max_tokens);
    const cost: Record<Dim, number> = { requests: 1, tokens: input + output, input, output };
    const admitted = dims.every((d) => (buckets.get(d) as Bucket).level >= cost[d]);
    let waitMs = 0;
    for (const d of dims) {
      const b = buckets.get(d) as Bucket;
      if (admitted) {
        b.level -= cost[d];
        charged[d] += cost[d];
        lowestShare[d] = Math.min(lowestShare[d], b.level / b.limit);
      } else {
        waitMs = Math.max(waitMs, (cost[d] - b.level) / b.rate);
      }
    }
    if (admitted) {
      if (Number.isNaN(span.first)) span.first = t;
      span.last = t;
    }
    const headers = o.style === 'openai' ? openaiHeaders(buckets) : anthropicHeaders(buckets, t);
    if (!admitted) {
      if (o.style === 'openai') headers['retry-after-ms'] = String(Math.ceil(waitMs));
      headers['retry-after'] = String(Math.ceil(waitMs / 1000));
    }
    statuses.push(admitted ? 200 : 429);
    setTimeout(() => {
      res.writeHead(admitted ? 200 : 429, { 'content-type': 'application/json', ...headers });
      res.end(admitted ? '{"ok":true}' : '{"error":{"type":"rate_limit_error"}}');
    }, latencyMs);
  };

  const server: TestServer = await startServer((req: IncomingMessage, res: ServerResponse) => {
    // Answers take 0 to 30 ms, in a fixed scramble, so that answers overtake one another.
    const latency = (seen++ * 7919) % 31;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      answer(body, res, latency);
    });
  });
  return { url: server.url, statuses, charged, lowestShare, span, close: () => server.close() };
}

/** OpenAI's set: `x-ratelimit-*-{requests,tokens}`, resets as Go durations. */
function openaiHeaders(buckets: Map<Dim, Bucket>): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [d, name] of [
    ['requests', 'requests'],
    ['tokens', 'tokens'],
  ] as const) {
    const b = buckets.get(d);
    if (!b) continue;
    headers[`x-ratelimit-limit-${name}`] = String(b.limit);
    headers[`x-ratelimit-remaining-${name}`] = String(Math.floor(b.level));
    headers[`x-ratelimit-reset-${name}`] = goDuration(toFullMs(b));
  }
  return headers;
}

/**
 * Anthropic's set: `anthropic-ratelimit-*`, resets as RFC 3339 instants in whole seconds
 * (rounded up: "fully replenished" by then), token counts rounded to the nearest thousand as
 * its page says, `tokens` the more restrictive of input and output, and the server's `Date`.
 */
function anthropicHeaders(buckets: Map<Dim, Bucket>, t: number): Record<string, string> {
  const headers: Record<string, string> = { date: new Date(t).toUTCString() };
  const set = (name: string, b: Bucket, rounded: boolean): void => {
    const remaining = Math.floor(b.level);
    headers[`anthropic-ratelimit-${name}-limit`] = String(b.limit);
    headers[`anthropic-ratelimit-${name}-remaining`] = String(
      rounded ? Math.round(remaining / 1000) * 1000 : remaining,
    );
    const reset = new Date(Math.ceil((t + toFullMs(b)) / 1000) * 1000);
    headers[`anthropic-ratelimit-${name}-reset`] = reset.toISOString().replace('.000Z', 'Z');
  };
  const requests = buckets.get('requests');
  const input = buckets.get('input');
  const output = buckets.get('output');
  if (requests) set('requests', requests, false);
  if (input) set('input-tokens', input, true);
  if (output) set('output-tokens', output, true);
  if (input && output) {
    set('tokens', input.level / input.limit < output.level / output.limit ? input : output, true);
  }
  return headers;
}

/** Ms until the bucket is whole again, rounded up. */
function toFullMs(b: Bucket): number {
  return Math.ceil((b.limit - b.level) / b.rate);
}

/** Go's `time.Duration.String()`, which OpenAI's resets are written in, for whole ms. */
export function goDuration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = String((ms % 60_000) / 1000);
  return h > 0 ? `${h}h${m}m${s}s` : m > 0 ? `${m}m${s}s` : `${s}s`;
}
