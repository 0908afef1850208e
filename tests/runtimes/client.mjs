// @floodgate/client inside each runtime: it calls the served sample until one call is refused
// first and then admitted, waiting as the server asked. Bun and Deno run it as a script that
// prints its report; on workerd it is a second worker reaching the sample through a service
// binding, and answers its report to a request.

/** The shared body: `fetchFn` is the runtime's way to reach the sample. */
function probe(url, headers) {
  return `import { withRetry } from '@floodgate/client';

async function probe(fetchFn) {
  const retries = [];
  const api = withRetry(fetchFn, { retries: 3, maxServerJitterMs: 100, onRetry: (e) => retries.push(e) });
  for (let call = 0; call < 300; call++) {
    retries.length = 0;
    const res = await api(${JSON.stringify(url)}, { headers: ${JSON.stringify(headers)} });
    await res.arrayBuffer();
    if (retries.length > 0 || res.status !== 200) {
      return { calls: call + 1, status: res.status, retries: retries.map((r) => ({ source: r.source, delayMs: r.delayMs, serverDelayMs: r.serverDelayMs })) };
    }
  }
  return { calls: 300, status: 200, retries: [] };
}
`;
}

/** A script for Bun or Deno that prints the report as one JSON line. */
export function clientScript(url, headers) {
  return `${probe(url, headers)}
console.log(JSON.stringify(await probe(fetch)));
`;
}

/** A worker with a MAIN service binding that answers the report. */
export function clientWorker(url, headers) {
  return `${probe(url, headers)}
export default {
  async fetch(_request, env) {
    return Response.json(await probe((input, init) => env.MAIN.fetch(input, init)));
  },
};
`;
}
