import { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  fetchWithRetry,
  isRetryBodyNotReplayableError,
  RetryBodyNotReplayableError,
  RetryError,
  withRetry,
} from '../src/index.js';
import { ok, startServer, type TestServer } from './server.js';

// Issue #14 item 5: a streamed body is read by the first attempt; a retry sent it empty (async
// iterable) or threw a TypeError (Node Readable, which fetch wants with `duplex: 'half'`).

let server: TestServer;
let bodies: string[];
beforeAll(async () => {
  server = await startServer();
});
afterAll(() => server.close());

/** Records each request's body, then answers `status` to the first `times`, then 200. */
function refuseWhole(times: number, status = 503): void {
  bodies = [];
  server.handle = (req, res) => {
    let body = '';
    req.on('data', (c) => {
      body += c;
    });
    req.on('end', () => {
      bodies.push(body);
      if (bodies.length <= times) res.writeHead(status, { 'Retry-After': '0' }).end('busy');
      else ok(req, res);
    });
  };
}

const bytes = (s: string) => new TextEncoder().encode(s);
const STREAMS: [string, () => unknown][] = [
  [
    'ReadableStream',
    () =>
      new ReadableStream({
        start(c) {
          c.enqueue(bytes('pay'));
          c.enqueue(bytes('load'));
          c.close();
        },
      }),
  ],
  [
    'async generator',
    () =>
      (async function* () {
        yield bytes('pay');
        yield bytes('load');
      })(),
  ],
  ['Node Readable', () => Readable.from([Buffer.from('pay'), Buffer.from('load')])],
];

const put = (body: unknown, init: RequestInit = {}) =>
  fetchWithRetry(`${server.url}/`, { method: 'PUT', body: body as RequestInit['body'], ...init });

describe('a streamed body is sent once, whole', () => {
  it.each(STREAMS)('%s: answered at once, the body arrives whole', async (_name, make) => {
    refuseWhole(0);
    const res = await put(make());
    expect(res.status).toBe(200);
    expect(bodies).toEqual(['payload']);
  });

  it.each(STREAMS)('%s: a 503 that would be retried fails with a typed error', async (_n, make) => {
    refuseWhole(1);
    const error = await put(make()).catch((e: unknown) => e);
    expect(bodies).toEqual(['payload']);
    expect(error).toBeInstanceOf(RetryBodyNotReplayableError);
    expect(error).toBeInstanceOf(RetryError);
    expect(isRetryBodyNotReplayableError(error)).toBe(true);
    const e = error as RetryBodyNotReplayableError;
    expect(e.code).toBe('BODY_NOT_REPLAYABLE');
    expect(e.attempt).toBe(1);
    expect(e.response?.status).toBe(503);
    expect(await e.response?.text()).toBe('busy');
    expect(e.message).toMatch(/stream/);
  });

  it.each(STREAMS)(
    '%s: a network error fails with the typed error, cause kept',
    async (_n, make) => {
      bodies = [];
      server.handle = (req) => {
        req.resume();
        req.on('end', () => {
          bodies.push('seen');
          req.socket.destroy();
        });
      };
      const error = await put(make()).catch((e: unknown) => e);
      expect(bodies).toEqual(['seen']);
      expect(isRetryBodyNotReplayableError(error)).toBe(true);
      expect((error as RetryBodyNotReplayableError).response).toBeUndefined();
      expect((error as Error).cause).toBeInstanceOf(TypeError);
    },
  );
});

describe('where no retry would be made, the response comes back as fetch gives it', () => {
  it('a POST (not retried without an Idempotency-Key)', async () => {
    refuseWhole(1);
    const res = await fetchWithRetry(`${server.url}/`, {
      method: 'POST',
      body: STREAMS[1]?.[1]() as RequestInit['body'],
    });
    expect(res.status).toBe(503);
    expect(bodies).toEqual(['payload']);
  });

  it('retries: 0', async () => {
    refuseWhole(1);
    const api = withRetry(fetch, { retries: 0 });
    const res = await api(`${server.url}/`, {
      method: 'PUT',
      body: STREAMS[2]?.[1]() as RequestInit['body'],
    });
    expect(res.status).toBe(503);
  });

  it('a duplex the caller set is kept', async () => {
    refuseWhole(0);
    const res = await put(STREAMS[0]?.[1](), { duplex: 'half' } as RequestInit);
    expect(res.status).toBe(200);
    expect(bodies).toEqual(['payload']);
  });

  it('replayable bodies (string, bytes, Blob, URLSearchParams) are still retried whole', async () => {
    for (const body of ['payload', bytes('payload'), new Blob(['payload']), 'x=payload']) {
      refuseWhole(1);
      const res = await put(body === 'x=payload' ? new URLSearchParams(body) : body);
      expect(res.status).toBe(200);
      expect(bodies).toHaveLength(2);
      expect(bodies[1]).toBe(bodies[0]);
    }
  });
});
