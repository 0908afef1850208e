// The batch client: N chat completions through the gateway, a few at a time, paced by
// `@floodgate/client/model-apis` from the gateway's `x-ratelimit-*` headers so that it stays
// under the requests and the tokens per minute without being refused.
import { withRetry } from '@floodgate/client';
import { createModelApiPacer, modelApiDelay } from '@floodgate/client/model-apis';

const TEXT =
  'Summarise the following notes in two sentences for a status report to the whole team. ' +
  'The river gauge read higher than last spring, the mill race was cleared on Tuesday, and ' +
  'the survey of the north bank is waiting on the permit from the county office. ';

/** A fixed scramble in [0, 1), so that every run sends the same batch. */
function scramble(seed) {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

/**
 * `count` calls with prompts of `chars` characters and `max_tokens` in `maxTokens` (ranges,
 * inclusive), every other one streamed; the same on every run.
 * @param {{ count: number, chars: [number, number], maxTokens: [number, number] }} shape
 * @returns {Array<{ prompt: string, maxTokens: number, stream: boolean }>}
 */
export function makeCalls({ count, chars, maxTokens }) {
  const r = scramble(7);
  const between = ([lo, hi]) => lo + Math.floor(r() * (hi - lo + 1));
  return Array.from({ length: count }, (_, i) => {
    const n = between(chars);
    const prompt = TEXT.repeat(Math.ceil(n / TEXT.length)).slice(0, n);
    return { prompt, maxTokens: between(maxTokens), stream: i % 2 === 1 };
  });
}

/**
 * Reads a chat completion, streamed or not: the text and the usage it reports.
 * @param {Response} res
 * @param {boolean} stream
 */
export async function readCompletion(res, stream) {
  if (!stream) {
    const json = await res.json();
    return { text: json.choices?.[0]?.message?.content ?? '', usage: json.usage, chunks: 0 };
  }
  const raw = await res.text();
  let text = '';
  let usage;
  let chunks = 0;
  for (const line of raw.split('\n')) {
    if (!line.startsWith('data: ') || line === 'data: [DONE]') continue;
    const chunk = JSON.parse(line.slice(6));
    const content = chunk.choices?.[0]?.delta?.content;
    if (content) {
      text += content;
      chunks++;
    }
    if (chunk.usage) usage = chunk.usage;
  }
  return { text, usage, chunks };
}

/**
 * Sends `calls` to `url` (the gateway's origin) for `apiKey`, `concurrency` at a time, through
 * `withRetry(fetch)` with a `ModelApiPacer`: each call waits until the requests and tokens the
 * gateway last reported leave room for it. A 429 would be retried as its headers say; the result
 * counts every one seen.
 * @param {{ url: string, apiKey: string, calls: ReturnType<typeof makeCalls>, concurrency?: number,
 *   paced?: boolean }} options
 */
export async function runBatch({ url, apiKey, calls, concurrency = 4, paced = true }) {
  const statuses = new Map();
  let refused = 0; // 429s seen, retried or not
  // `paced: false`, for comparison: plain fetch, no pacing, no retries.
  const client = !paced
    ? fetch
    : withRetry(fetch, {
        pacing: createModelApiPacer(), // weighs each call: a token per 4 body characters + max_tokens
        serverDelay: modelApiDelay, // retry-after-ms, Retry-After, then x-ratelimit-reset-*
        methods: ['POST'],
        retries: 5,
        maxDelayMs: 120_000,
        onRetry: (event) => {
          if (event.response?.status === 429) refused++;
        },
      });
  let next = 0;
  let tokens = 0;
  const started = performance.now();
  const worker = async () => {
    while (next < calls.length) {
      const call = calls[next++];
      const res = await client(`${url}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify({
          model: 'fake-model',
          max_tokens: call.maxTokens,
          messages: [{ role: 'user', content: call.prompt }],
          ...(call.stream ? { stream: true, stream_options: { include_usage: true } } : {}),
        }),
      });
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status === 429) refused++;
      if (res.ok) {
        const { usage } = await readCompletion(res, call.stream);
        tokens += usage?.total_tokens ?? 0; // after the await: the workers share `tokens`
      } else {
        await res.arrayBuffer();
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return {
    sent: calls.length,
    ok: statuses.get(200) ?? 0,
    refused,
    statuses,
    /** Tokens the model reported using, over every call. */
    tokens,
    elapsedMs: performance.now() - started,
  };
}
