import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Handler = (req: IncomingMessage, res: ServerResponse, n: number) => void;

export interface TestServer {
  readonly url: string;
  /** Requests seen so far (the handler also gets the 1-based count). */
  readonly requests: IncomingMessage[];
  handle: Handler;
  close(): Promise<void>;
}

/** A real node:http server on a free loopback port; `handle` can be swapped per test. */
export async function startServer(handle: Handler = ok): Promise<TestServer> {
  const requests: IncomingMessage[] = [];
  const state: TestServer = {
    url: '',
    requests,
    handle,
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
  const server = createServer((req, res) => {
    requests.push(req);
    state.handle(req, res, requests.length);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  (state as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return state;
}

export function ok(_req: IncomingMessage, res: ServerResponse): void {
  res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
}

/** Answers the first `times` requests with `status` and `headers`, then 200. */
export function refuseFirst(headers: Record<string, string>, times = 1, status = 429): Handler {
  let seen = 0;
  return (req, res) => {
    seen += 1;
    if (seen <= times) res.writeHead(status, headers).end('slow down');
    else ok(req, res);
  };
}
