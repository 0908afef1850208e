// A configuration warning must reach the console on every runtime, not only where
// `process.emitWarning` exists: workerd has one (nodejs_compat is its default from 2026-08-04)
// that prints nothing. This app makes both warning paths speak: the middleware's
// (UNKNOWN_CLIENT_ADDRESS, for a getAddress that finds nothing) and core's own `warnOnce`.
import assert from 'node:assert/strict';

export const WARNING_APP = `import { tokenBucket } from '@floodgate/core';
import { warnOnce } from '@floodgate/core/internal';
import { rateLimit } from '@floodgate/http/fetch';
import { MemoryStore } from '@floodgate/memory';

const limited = rateLimit({
  policy: tokenBucket({ limit: 100, interval: '1m' }),
  store: new MemoryStore(),
  getAddress: () => undefined,
});
const handler = limited.wrap(async () => new Response('ok'));
export default {
  fetch(request: Request, ...rest: unknown[]) {
    warnOnce('RUNTIME_CHECK', 'printed by @floodgate/core');
    return handler(request, ...(rest as []));
  },
};
`;

const EXPECTED = ['UNKNOWN_CLIENT_ADDRESS', 'RUNTIME_CHECK'];

/** Both warnings appear in what the server printed; resolves a line for the log. */
export async function warningsPrinted(server) {
  // The probe found no address: ipKey() refuses, answered 503 under the default fail-closed.
  assert.equal(server.probe.status, 503, `the probe got ${server.probe.status}`);
  await server.probe.arrayBuffer();
  // A runtime writes its log through a pipe of its own: give it a moment to arrive.
  const deadline = Date.now() + 10_000;
  let missing = EXPECTED;
  while (Date.now() < deadline) {
    const output = server.output();
    missing = EXPECTED.filter((code) => !output.includes(code));
    if (missing.length === 0) return `${EXPECTED.join(' and ')} printed`;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not printed: ${missing.join(', ')}`);
}
