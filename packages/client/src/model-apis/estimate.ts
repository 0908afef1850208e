/**
 * What a call is expected to spend: a total, or input and output apart (Anthropic limits them
 * apart). A plain number, where the limits are apart, is charged in full to each of them: the
 * pacer cannot know how it splits, and erring high costs time, not a 429.
 * @example
 * ```ts
 * import type { TokenCost } from '@floodgate/client/model-apis';
 *
 * const total: TokenCost = 1200;
 * const split: TokenCost = { input: 900, output: 300 };
 * ```
 * @beta
 */
export type TokenCost = number | { readonly input: number; readonly output: number };

/** Where the cap on a completion's length is written, by API: Chat, newer Chat, Responses. */
const OUTPUT_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const;

// Both defaults read the body; a batch sends each body once, so one parse per body is enough.
let lastBody: string | undefined;
let lastJson: unknown;

/** The JSON object a string body holds, or undefined. */
function bodyJson(init: RequestInit | undefined): Record<string, unknown> | undefined {
  const body = init?.body;
  if (typeof body !== 'string') return undefined;
  if (body !== lastBody) {
    lastBody = body;
    try {
      lastJson = JSON.parse(body);
    } catch {
      lastJson = undefined;
    }
  }
  return typeof lastJson === 'object' && lastJson !== null
    ? (lastJson as Record<string, unknown>)
    : undefined;
}

/**
 * A rough estimate of what a model-API call spends, from its string body: input, a token per 4
 * characters of the whole body (OpenAI's rule of thumb for English, "1 token ≈ 4 chars"; the JSON
 * around the prompt makes it err high); output, the `max_tokens`, `max_completion_tokens` or
 * `max_output_tokens` it asks for (both providers charge a call's cap up front). A body that is not
 * a string (a stream, bytes, a `Request`'s own) counts 0. Pass `tokens` to the pacer for a real
 * count (a tokenizer's): a low estimate can cost a 429, which the retry then waits out.
 * @example
 * ```ts
 * import { estimateTokens } from '@floodgate/client/model-apis';
 *
 * const body = JSON.stringify({
 *   model: 'gpt-4o-mini',
 *   max_tokens: 256,
 *   messages: [{ role: 'user', content: 'Name three rivers.' }],
 * });
 * estimateTokens('https://api.openai.com/v1/chat/completions', { method: 'POST', body });
 * // { input: 25, output: 256 }
 * ```
 * @beta
 */
export function estimateTokens(
  _input: string | URL | Request,
  init: RequestInit | undefined,
): { input: number; output: number } {
  const body = init?.body;
  if (typeof body !== 'string') return { input: 0, output: 0 };
  const json = bodyJson(init);
  let output = 0;
  for (const field of OUTPUT_FIELDS) {
    const cap = json?.[field];
    if (typeof cap === 'number' && Number.isSafeInteger(cap) && cap > 0) {
      output = cap;
      break;
    }
  }
  return { input: Math.ceil(body.length / 4), output };
}

/**
 * The default budget key: the origin, and the model a JSON body names. Both providers limit each
 * model (Anthropic: each model class) on its own, so one batch over two models paces by two.
 */
export function modelKey(
  origin: string,
  _input: string | URL | Request,
  init: RequestInit | undefined,
): string {
  const model = bodyJson(init)?.model;
  return typeof model === 'string' ? `${origin} ${model}` : origin;
}
