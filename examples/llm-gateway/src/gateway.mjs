// The gateway: an OpenAI-compatible `POST /v1/chat/completions` on Hono, in front of a model
// API, with requests and tokens per minute per API key on Redis, shared by every gateway process
// that uses the same Redis.
//
// Each call is admitted against an estimate and corrected once the model has said what it used:
//   reserve { requests: 1, tokens: prompt + max_tokens }  (one Redis round trip; 429 if it fails)
//   forward to the model, stream the answer through, counting
//   settle  { requests: 1, tokens: usage.total_tokens }   (one Redis round trip, at the end)
// A client that hangs up mid-stream is charged what was sent: the prompt and the completion
// tokens written to it so far. docs/ai.md has the why of each step.
import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createLimiter, isFloodgateError, tokenBucket } from '@floodgate/core';
import { formatRateLimitHeaders } from '@floodgate/core/headers';
import { IoRedisStore } from '@floodgate/ioredis';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { Redis } from 'ioredis';
import { goDuration, maxTokensOf, promptTokens } from './tokens.mjs';

/**
 * The limiter's identity for an API key: a hash, so that no key is written to Redis (and a
 * long key makes no long Redis key).
 * @param {string} apiKey
 */
export function identityOf(apiKey) {
  return `key_${createHash('sha256').update(apiKey).digest('hex').slice(0, 32)}`;
}

/**
 * OpenAI's rate-limit headers for a decision, one set per policy (`requests`, `tokens`):
 * `x-ratelimit-limit-*`, `x-ratelimit-remaining-*`, and `x-ratelimit-reset-*`, the time until
 * the policy is whole again, as a Go duration (`6m0s`, `1s`, `20ms`). What
 * `@floodgate/client/model-apis` paces by.
 * @param {import('@floodgate/core').Decision} d
 */
export function openAiRateLimitHeaders(d) {
  const headers = {};
  for (const p of d.policies) {
    headers[`x-ratelimit-limit-${p.name}`] = String(p.limit);
    headers[`x-ratelimit-remaining-${p.name}`] = String(p.remaining);
    headers[`x-ratelimit-reset-${p.name}`] = goDuration(p.resetAfterMs);
  }
  return headers;
}

/** An OpenAI-style error body. */
function apiError(message, type, code) {
  return { error: { message, type, param: null, code } };
}

/** The API key of `Authorization: Bearer <key>`, or undefined. */
function bearer(header) {
  const m = /^Bearer +(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

/**
 * Starts the gateway on a loopback port.
 * @param {{
 *   redisUrl: string,
 *   modelUrl: string,
 *   limits: { requests: number, tokens: number, interval?: string | number },
 *   defaultMaxTokens?: number,
 *   settleWithinMs?: number,
 *   prefix?: string,
 *   port?: number,
 *   onSettled?: (event: { identity: string, outcome: 'completed' | 'aborted' | 'upstream-error',
 *     estimate: number, actual: number }) => void,
 * }} options
 *   `limits`: per API key, `requests` and `tokens` per `interval` (default '1m': RPM and TPM),
 *   each a token bucket, as OpenAI and Anthropic describe theirs.
 *   `defaultMaxTokens`: the completion estimated for a request that sets no `max_tokens` (the
 *   settle corrects it either way; a low one can put the key in debt).
 *   `onSettled`: told after each settle, with the estimate and the tokens really charged.
 */
export async function startGateway({
  redisUrl,
  modelUrl,
  limits,
  defaultMaxTokens = 256,
  settleWithinMs,
  prefix = 'llm-gateway',
  port = 0,
  onSettled,
}) {
  const interval = limits.interval ?? '1m';
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1, lazyConnect: true });
  // Connection trouble shows in the decisions (`reason`: the limiter's fallback decided) and in
  // failed settles; ioredis would also print every reconnect attempt.
  let lastRedisError;
  redis.on('error', (error) => {
    lastRedisError = error;
  });
  try {
    await redis.connect();
  } catch (error) {
    redis.disconnect();
    throw new Error(`cannot reach Redis at ${redisUrl}: ${(lastRedisError ?? error).message}`);
  }
  const limiter = createLimiter({
    store: new IoRedisStore(redis),
    policy: [
      tokenBucket({ name: 'requests', limit: limits.requests, interval }),
      tokenBucket({ name: 'tokens', limit: limits.tokens, interval }),
    ],
    prefix,
  });
  // What the gateway did, for the demo's table and the tests: admissions and their tokens.
  const stats = {
    admitted: 0,
    denied: 0,
    completed: 0,
    aborted: 0,
    upstreamErrors: 0,
    /** Tokens reserved: the sum of the estimates admitted. */
    estimated: 0,
    /** Tokens charged once settled: the sum of what the model reported (or what was sent). */
    charged: 0,
  };
  /** Settles in flight, so that close() waits for the last one. */
  const settling = new Set();

  const app = new Hono();
  app.post('/v1/chat/completions', async (c) => {
    const apiKey = bearer(c.req.header('authorization'));
    if (apiKey === undefined) {
      return c.json(
        apiError(
          'Send your API key as Authorization: Bearer <key>.',
          'invalid_request_error',
          'invalid_api_key',
        ),
        401,
      );
    }
    let body;
    try {
      body = await c.req.json();
    } catch {
      body = undefined;
    }
    if (typeof body !== 'object' || body === null || Array.isArray(body)) {
      return c.json(
        apiError('The body must be a JSON object.', 'invalid_request_error', null),
        400,
      );
    }

    // The estimate: the prompt as the model will count it, and all the completion it may write.
    const prompt = promptTokens(body.messages);
    const estimate = prompt + (maxTokensOf(body) ?? defaultMaxTokens);
    const identity = identityOf(apiKey);
    let r;
    try {
      r = await limiter.reserve(identity, {
        cost: { requests: 1, tokens: estimate },
        ...(settleWithinMs === undefined ? {} : { settleWithinMs }),
      });
    } catch (error) {
      // More tokens than the key may ever spend at once: no wait would help, so not a 429.
      if (isFloodgateError(error) && error.code === 'COST_EXCEEDS_CAPACITY') {
        return c.json(
          apiError(
            `This request may use up to ${estimate} tokens, more than the ${limits.tokens} this key may use per ${interval}. Lower max_tokens or shorten the prompt.`,
            'invalid_request_error',
            'request_too_large',
          ),
          400,
        );
      }
      throw error;
    }
    const headers = { ...formatRateLimitHeaders(r), ...openAiRateLimitHeaders(r) };
    if (!r.allowed) {
      stats.denied++;
      const over = r.policies.filter((p) => !p.allowed).map((p) => p.name);
      return c.json(
        apiError(
          `Rate limit reached for ${over.join(' and ')} per ${interval} on this key. Please try again in ${goDuration(r.retryAfterMs)}.`,
          over[0] ?? 'requests',
          'rate_limit_exceeded',
        ),
        429,
        { ...headers, 'retry-after-ms': String(r.retryAfterMs) },
      );
    }
    stats.admitted++;
    stats.estimated += estimate;

    // Settles once, whatever ends the call first; a failed settle is logged, never thrown at
    // the client (the reservation then stands at the estimate).
    let settled = false;
    const settle = (outcome, actual) => {
      if (settled) return Promise.resolve();
      settled = true;
      stats[outcome === 'upstream-error' ? 'upstreamErrors' : outcome]++;
      stats.charged += actual;
      const p = r
        .settle({ requests: 1, tokens: actual })
        .then(
          () => onSettled?.({ identity, outcome, estimate, actual }),
          (error) => console.error(`settle failed (${outcome}, ${actual} tokens):`, error),
        )
        .finally(() => settling.delete(p));
      settling.add(p);
      return p;
    };

    const stream = body.stream === true;
    const wantsUsage = stream && body.stream_options?.include_usage === true;
    const upstreamBody = stream
      ? // Without it an OpenAI stream carries no usage: ask for it, and drop it for a client
        // that did not.
        { ...body, stream_options: { ...body.stream_options, include_usage: true } }
      : body;
    const abort = new AbortController();
    let upstream;
    try {
      upstream = await fetch(`${modelUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(upstreamBody),
        signal: abort.signal,
      });
    } catch (error) {
      await r.cancel().catch(() => {}); // the model was never reached: nothing used
      return c.json(
        apiError(`The model did not answer: ${error}`, 'api_error', null),
        502,
        headers,
      );
    }
    if (!upstream.ok) {
      // The model refused the call: it used nothing, so the whole estimate goes back.
      await r.cancel().catch(() => {});
      return new Response(upstream.body, {
        status: upstream.status,
        headers: {
          ...headers,
          'content-type': upstream.headers.get('content-type') ?? 'application/json',
        },
      });
    }

    if (!stream) {
      const answer = await upstream.json();
      await settle('completed', answer.usage?.total_tokens ?? estimate);
      return c.json(answer, 200, headers);
    }

    // The stream, passed through event by event. `sent` counts the completion tokens written
    // to the client (one per content chunk, as the model streams them). Nothing is read ahead
    // of the client (highWaterMark 0): an event is taken from the model when the client's
    // connection takes the previous one.
    const reader = upstream.body.getReader();
    const decoder = new TextDecoder();
    const encoder = new TextEncoder();
    let buffer = '';
    let ended = false;
    let usage;
    let sent = 0;
    /** Events parsed and not yet written: `{ text, tokens }`. */
    const queue = [];
    const parse = (flush) => {
      const events = buffer.split(/\r?\n\r?\n/);
      buffer = flush ? '' : (events.pop() ?? '');
      for (const text of events) {
        if (text.trim() === '') continue;
        const data = text
          .split(/\r?\n/)
          .filter((l) => l.startsWith('data:'))
          .map((l) => l.slice(5).trimStart())
          .join('\n');
        let chunk;
        try {
          chunk = data === '[DONE]' || data === '' ? undefined : JSON.parse(data);
        } catch {
          chunk = undefined;
        }
        if (chunk?.usage) usage = chunk.usage;
        const choices = Array.isArray(chunk?.choices) ? chunk.choices : [];
        // The usage chunk (no choices) is the gateway's own request: not for a client that did
        // not ask.
        if (chunk?.usage && choices.length === 0 && !wantsUsage) continue;
        const tokens = choices.filter(
          (ch) => typeof ch?.delta?.content === 'string' && ch.delta.content !== '',
        ).length;
        queue.push({ text: `${text}\n\n`, tokens });
      }
    };
    const out = new ReadableStream(
      {
        async pull(controller) {
          try {
            for (;;) {
              const event = queue.shift();
              if (event !== undefined) {
                controller.enqueue(encoder.encode(event.text));
                sent += event.tokens;
                return;
              }
              if (ended) {
                // Settled before the client sees the end: its next call sees the real charge.
                await settle('completed', usage?.total_tokens ?? prompt + sent);
                controller.close();
                return;
              }
              const { done, value } = await reader.read();
              if (done) {
                buffer += decoder.decode();
                parse(true);
                ended = true;
              } else {
                buffer += decoder.decode(value, { stream: true });
                parse(false);
              }
            }
          } catch (error) {
            // The model's stream broke: charge what the client got.
            if (!settled) {
              await settle('upstream-error', prompt + sent);
              controller.error(error);
            }
          }
        },
        cancel() {
          // The client went away: stop the model and charge what was sent.
          const done = settle('aborted', prompt + sent);
          abort.abort();
          return done;
        },
      },
      { highWaterMark: 0 },
    );
    return new Response(out, {
      status: 200,
      headers: { ...headers, 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
    });
  });

  const server = serve({ fetch: app.fetch, port, hostname: '127.0.0.1' });
  if (!server.listening) await once(server, 'listening');
  const actualPort = server.address().port;
  return {
    url: `http://127.0.0.1:${actualPort}`,
    port: actualPort,
    limiter,
    stats,
    /** The key's budget as it stands (charges nothing): `policies` has `requests` and `tokens`. */
    peek: (apiKey) => limiter.peek(identityOf(apiKey)),
    close: async () => {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(() => resolve()));
      await Promise.allSettled([...settling]);
      await redis.quit().catch(() => redis.disconnect());
    },
  };
}
