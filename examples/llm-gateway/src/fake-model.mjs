// A local stand-in for an OpenAI-compatible model API: `POST /v1/chat/completions`, answered as
// one JSON body or, with `stream: true`, as server-sent events, one token per chunk. Its counts
// are deterministic, so the tests can say exactly what each call used:
// - prompt tokens: a token per 4 characters of each message's content, rounded up (tokens.mjs);
// - completion tokens: twice the prompt tokens, cut at `max_tokens` / `max_completion_tokens`
//   (`finish_reason` 'length' when cut, 'stop' otherwise).
// It enforces no limit of its own: limits are the gateway's job.
import { once } from 'node:events';
import http from 'node:http';
import { maxTokensOf, promptTokens } from './tokens.mjs';

const WORDS = ['The ', 'river ', 'runs ', 'past ', 'the ', 'old ', 'mill ', 'and ', 'on ', 'to '];

/** What a request will use: the fake model's deterministic rule (see the top of this file). */
export function usageFor(body) {
  const prompt = promptTokens(body?.messages);
  const natural = 2 * prompt;
  const cap = maxTokensOf(body);
  const completion = cap === undefined ? natural : Math.min(cap, natural);
  return {
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
    },
    finishReason: completion < natural ? 'length' : 'stop',
  };
}

/**
 * Starts the fake model on a free loopback port.
 * `settings.stallAfterTokens`: when a number, a stream stops after that many tokens and waits
 * until its client goes away (the tests use it to abort a stream at a known point).
 * `calls`: one entry per request, `{ stream, usage, sent, closedEarly }`, `sent` the completion
 * tokens written so far.
 * @param {{ msPerToken?: number, port?: number }} [options] `msPerToken`: a pause between streamed
 *   tokens (0: as fast as the socket takes them)
 */
export async function startFakeModel({ msPerToken = 0, port = 0 } = {}) {
  const settings = { stallAfterTokens: undefined };
  const calls = [];
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'POST' || req.url !== '/v1/chat/completions') {
      sendJson(res, 404, { error: { message: 'not found', type: 'invalid_request_error' } });
      return;
    }
    let body;
    try {
      const chunks = [];
      for await (const c of req) chunks.push(c);
      body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      sendJson(res, 400, {
        error: { message: 'the body is not JSON', type: 'invalid_request_error' },
      });
      return;
    }
    const { usage, finishReason } = usageFor(body);
    const call = { stream: body.stream === true, usage, sent: 0, closedEarly: false };
    calls.push(call);
    const id = `chatcmpl-${calls.length}`;
    const created = Math.floor(Date.now() / 1000);
    const model = typeof body.model === 'string' ? body.model : 'fake-model';
    const words = Array.from(
      { length: usage.completion_tokens },
      (_, i) => WORDS[i % WORDS.length],
    );

    if (!call.stream) {
      call.sent = usage.completion_tokens;
      sendJson(res, 200, {
        id,
        object: 'chat.completion',
        created,
        model,
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: words.join('') },
            finish_reason: finishReason,
          },
        ],
        usage,
      });
      return;
    }

    const closed = once(res, 'close').then(() => {
      if (!res.writableFinished) call.closedEarly = true;
    });
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (choices, extra = {}) =>
      `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices, ...extra })}\n\n`;
    res.write(
      chunk([{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }]),
    );
    for (const word of words) {
      if (settings.stallAfterTokens !== undefined && call.sent >= settings.stallAfterTokens) {
        await closed; // stalled: nothing more until the client hangs up
        return;
      }
      if (res.destroyed) return;
      res.write(chunk([{ index: 0, delta: { content: word }, finish_reason: null }]));
      call.sent++;
      if (msPerToken > 0) await new Promise((r) => setTimeout(r, msPerToken));
    }
    if (res.destroyed) return;
    res.write(chunk([{ index: 0, delta: {}, finish_reason: finishReason }]));
    // As OpenAI does: usage in a last chunk of its own, only when the request asked for it.
    if (body.stream_options?.include_usage === true) res.write(chunk([], { usage }));
    res.end('data: [DONE]\n\n');
  });
  server.listen(port, '127.0.0.1');
  await once(server, 'listening');
  const actual = server.address().port;
  return {
    url: `http://127.0.0.1:${actual}`,
    port: actual,
    settings,
    calls,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

function sendJson(res, status, value) {
  res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
}
