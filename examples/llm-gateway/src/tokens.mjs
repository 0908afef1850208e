// The token arithmetic the fake model and the gateway share, and the duration format of OpenAI's
// rate-limit headers.

/**
 * The fake model's tokenizer: a token per 4 characters, rounded up (OpenAI's rule of thumb for
 * English). A real gateway would use the model's own tokenizer for the prompt; the estimate only
 * has to be close, since the settle charges what the model reports.
 * @param {string} text
 */
export function countTokens(text) {
  return Math.ceil(text.length / 4);
}

/** The text of a chat message's content: a string, or an array of parts of which `text` counts. */
function contentText(content) {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content.map((part) => (typeof part?.text === 'string' ? part.text : '')).join('');
  }
  return '';
}

/**
 * A chat request's prompt tokens: each message's content counted on its own.
 * @param {unknown} messages
 */
export function promptTokens(messages) {
  if (!Array.isArray(messages)) return 0;
  return messages.reduce((sum, m) => sum + countTokens(contentText(m?.content)), 0);
}

/**
 * The most a chat request asks the model to write: `max_completion_tokens` (the newer name) or
 * `max_tokens`, when it is a positive whole number; undefined when it sets neither.
 */
export function maxTokensOf(body) {
  for (const field of ['max_completion_tokens', 'max_tokens']) {
    const cap = body?.[field];
    if (Number.isSafeInteger(cap) && cap > 0) return cap;
  }
  return undefined;
}

/**
 * Whole ms written as Go's `time.Duration.String()` writes them, which is how OpenAI writes its
 * `x-ratelimit-reset-*` headers: `0s`, `20ms`, `1s`, `1.5s`, `6m0s`, `1h2m3.5s`.
 * @param {number} ms
 */
export function goDuration(ms) {
  const t = Math.max(0, Math.ceil(ms));
  if (t === 0) return '0s';
  if (t < 1000) return `${t}ms`;
  const h = Math.floor(t / 3_600_000);
  const m = Math.floor((t % 3_600_000) / 60_000);
  const s = String((t % 60_000) / 1000);
  if (h > 0) return `${h}h${m}m${s}s`;
  return m > 0 ? `${m}m${s}s` : `${s}s`;
}
