import { createServer, type ServerResponse } from 'node:http';
import { fixedWindow } from '@floodgate/core';
import express from 'express';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit as expressLimit } from '../src/express/index.js';
import { rateLimit as nodeLimit } from '../src/node/index.js';
import { send } from './support/context.js';
import { urlOf } from './support/harness.js';
import { steadyMemoryStore } from './support/stores.js';

// A handler that passes its headers to writeHead replaces what setHeader put there; the
// exposed rate-limit names must survive it in every form writeHead takes.
const forms: [string, (res: ServerResponse) => void][] = [
  ['an object', (res) => res.writeHead(200, { 'Access-Control-Expose-Headers': 'X-Request-Id' })],
  [
    'an object, another case, with a status message',
    (res) => res.writeHead(200, 'OK', { 'access-control-expose-headers': 'X-Request-Id' }),
  ],
  [
    'a flat list',
    (res) =>
      res.writeHead(200, [
        'Content-Type',
        'text/plain',
        'Access-Control-Expose-Headers',
        'X-Request-Id',
      ]),
  ],
];

const limits = () => ({
  policy: fixedWindow({ name: 'api', limit: 5, window: '10s' }),
  store: steadyMemoryStore(),
});

const closers: (() => void)[] = [];
afterEach(() => {
  for (const close of closers.splice(0)) close();
});

async function listen(server: ReturnType<typeof createServer>): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(() => {
    server.close();
    server.closeAllConnections();
  });
  return urlOf(server.address());
}

const startNode = (write: (res: ServerResponse) => void): Promise<string> => {
  const limit = nodeLimit(limits());
  return listen(
    createServer(async (req, res) => {
      if (!(await limit(req, res))) return;
      write(res);
      res.end('ok');
    }),
  );
};

const startExpress = (write: (res: ServerResponse) => void): Promise<string> => {
  const app = express();
  app.use(expressLimit(limits()));
  app.get('/', (_req, res) => {
    write(res);
    res.end('ok');
  });
  return listen(createServer(app));
};

describe.each([
  ['node', startNode],
  ['express', startExpress],
])('%s: writeHead with headers keeps the exposed rate-limit names', (_name, start) => {
  for (const [form, write] of forms) {
    test(form, async () => {
      const r = await send(await start(write));
      expect(r.status).toBe(200);
      const exposed = (r.headers.get('access-control-expose-headers') ?? '')
        .split(',')
        .map((s) => s.trim());
      expect(exposed).toEqual(['X-Request-Id', 'RateLimit', 'RateLimit-Policy']);
      expect(r.headers.get('ratelimit')).toMatch(/^"api";r=4;t=\d+$/);
    });
  }
});
