import { serverNow } from '../server-delay.js';
import { readCount, readDuration, readRfc3339 } from './formats.js';

/**
 * Whose headers a response carried.
 * @example
 * ```ts
 * import { type ModelApiProvider, parseModelRateLimits } from '@floodgate/client/model-apis';
 *
 * declare const response: Response;
 * const provider: ModelApiProvider | undefined = parseModelRateLimits(response.headers)?.provider;
 * ```
 * @beta
 */
export type ModelApiProvider = 'openai' | 'anthropic';

/**
 * One limit a model API reports: its size, what is left of it, and how long until it is whole
 * again. A field the response did not carry, or carried in a form that cannot be read, is absent.
 * @example
 * ```ts
 * import { type ModelRateLimit, parseModelRateLimits } from '@floodgate/client/model-apis';
 *
 * function describe(name: string, l: ModelRateLimit | undefined): string {
 *   return `${name}: ${l?.remaining ?? '?'} of ${l?.limit ?? '?'}, whole in ${l?.resetMs ?? '?'} ms`;
 * }
 * declare const response: Response;
 * console.log(describe('tokens', parseModelRateLimits(response.headers)?.tokens));
 * ```
 * @beta
 */
export interface ModelRateLimit {
  /** The most the limit holds. */
  readonly limit?: number;
  /** What is left of it now. */
  readonly remaining?: number;
  /**
   * Milliseconds from the response until the limit is whole again ("resets to its initial
   * state", OpenAI; "fully replenished", Anthropic), never negative. Anthropic's instants are
   * read against the response's `Date` when it has one, so a skewed local clock does not count.
   */
  readonly resetMs?: number;
}

/**
 * What a model API's response said about its limits.
 * - OpenAI (and OpenAI-compatible APIs, Azure OpenAI): `x-ratelimit-{limit,remaining,reset}-
 *   {requests,tokens}`, resets as Go durations (`1s`, `6m0s`).
 * - Anthropic: `anthropic-ratelimit-{requests,tokens,input-tokens,output-tokens}-{limit,
 *   remaining,reset}`, resets as RFC 3339 instants. Its `tokens` is the most restrictive of the
 *   input and output limits in effect.
 * @example
 * ```ts
 * import { parseModelRateLimits } from '@floodgate/client/model-apis';
 *
 * const info = parseModelRateLimits(
 *   new Headers({
 *     'x-ratelimit-limit-tokens': '150000',
 *     'x-ratelimit-remaining-tokens': '149984',
 *     'x-ratelimit-reset-tokens': '6m0s',
 *   }),
 * );
 * // { provider: 'openai', tokens: { limit: 150000, remaining: 149984, resetMs: 360000 } }
 * ```
 * @beta
 */
export interface ModelRateLimits {
  /** Whose headers they were. */
  readonly provider: ModelApiProvider;
  /** Requests per minute. */
  readonly requests?: ModelRateLimit;
  /** OpenAI: tokens per minute. Anthropic: the most restrictive of its token limits. */
  readonly tokens?: ModelRateLimit;
  /** Anthropic only: input tokens per minute. */
  readonly inputTokens?: ModelRateLimit;
  /** Anthropic only: output tokens per minute. */
  readonly outputTokens?: ModelRateLimit;
}

/** The names of the limits, as ModelRateLimits has them. */
export type Dimension = 'requests' | 'tokens' | 'inputTokens' | 'outputTokens';
export const DIMENSIONS: readonly Dimension[] = [
  'requests',
  'tokens',
  'inputTokens',
  'outputTokens',
];
const ANTHROPIC_NAMES: Readonly<Record<Dimension, string>> = {
  requests: 'requests',
  tokens: 'tokens',
  inputTokens: 'input-tokens',
  outputTokens: 'output-tokens',
};

/**
 * Reads a model API's rate-limit headers, OpenAI's or Anthropic's (Anthropic's when a response
 * somehow carries both). Undefined when it carries neither. Never throws.
 * @param localNow - this machine's clock, in epoch ms; the response's `Date`, when readable, is
 * taken as the server's clock for Anthropic's instants.
 * @example
 * ```ts
 * import { parseModelRateLimits } from '@floodgate/client/model-apis';
 *
 * const response = await fetch('https://api.anthropic.com/v1/messages', { method: 'POST' });
 * const limits = parseModelRateLimits(response.headers);
 * if (limits?.outputTokens?.remaining === 0) {
 *   console.warn(`output tokens spent; whole again in ${limits.outputTokens.resetMs} ms`);
 * }
 * ```
 * @beta
 */
export function parseModelRateLimits(
  headers: Headers,
  localNow: number = Date.now(),
): ModelRateLimits | undefined {
  const anthropic = read(
    headers,
    (d, field) => `anthropic-ratelimit-${ANTHROPIC_NAMES[d]}-${field}`,
    (v) => {
      const at = readRfc3339(v);
      if (at === undefined) return undefined;
      const now = serverNow(headers, localNow) ?? localNow;
      return Math.max(0, Math.ceil(at - now));
    },
  );
  if (anthropic) return { provider: 'anthropic', ...anthropic };
  // OpenAI has requests and tokens only; its resets are durations, which need no clock.
  const openai = read(
    headers,
    (d, field) => (d === 'requests' || d === 'tokens' ? `x-ratelimit-${field}-${d}` : ''),
    readDuration,
  );
  return openai ? { provider: 'openai', ...openai } : undefined;
}

type Limits = { -readonly [D in Dimension]?: ModelRateLimit };

function read(
  headers: Headers,
  name: (d: Dimension, field: 'limit' | 'remaining' | 'reset') => string,
  reset: (value: string | null) => number | undefined,
): Limits | undefined {
  let out: Limits | undefined;
  for (const d of DIMENSIONS) {
    const get = (field: 'limit' | 'remaining' | 'reset'): string | null => {
      const header = name(d, field);
      return header === '' ? null : headers.get(header);
    };
    const limit: { -readonly [K in keyof ModelRateLimit]: ModelRateLimit[K] } = {};
    const l = readCount(get('limit'));
    const r = readCount(get('remaining'));
    const t = reset(get('reset'));
    if (l !== undefined) limit.limit = l;
    if (r !== undefined) limit.remaining = r;
    if (t !== undefined) limit.resetMs = t;
    if (l !== undefined || r !== undefined || t !== undefined) {
      out ??= {};
      out[d] = limit;
    }
  }
  return out;
}
