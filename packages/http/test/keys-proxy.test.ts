// Proxies: ports that a trusted proxy writes into X-Forwarded-For, the framework's own trust
// setting, and the warnings for a proxy set-up that lets clients share or pick a bucket.
import { createServer } from 'node:http';
import { createLimiter, fixedWindow, type Limiter } from '@floodgate/core';
import { MemoryStore } from '@floodgate/memory';
import express from 'express';
import Fastify, { type FastifyServerOptions } from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import { rateLimit as expressLimit } from '../src/express/index.js';
import { rateLimit as fastifyLimit } from '../src/fastify/index.js';
import { ipKey, type KeyFunction, type RateLimitWarning } from '../src/index.js';
import { type NodeRateLimitOptions, rateLimit as nodeLimit } from '../src/node/index.js';
import { T0 } from './support/context.js';
import { urlOf } from './support/harness.js';

const open: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((close) => close()));
});

function limitOf(limit: number): Limiter {
  return createLimiter({
    store: new MemoryStore({ now: () => T0 }),
    policy: fixedWindow({ name: 'per-ip', limit, window: '1m' }),
  });
}

function recording(key: KeyFunction): { key: KeyFunction; seen: Set<string | undefined> } {
  const seen = new Set<string | undefined>();
  return {
    seen,
    key: async (request) => {
      const value = await key(request);
      seen.add(value);
      return value;
    },
  };
}

async function nodeApp(options: NodeRateLimitOptions): Promise<string> {
  const limit = nodeLimit(options);
  const server = createServer(async (req, res) => {
    if (await limit(req, res)) res.end('ok');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return urlOf(server.address());
}

async function expressApp(
  trustProxy: unknown,
  options: Parameters<typeof expressLimit>[0],
): Promise<string> {
  const app = express();
  if (trustProxy !== undefined) app.set('trust proxy', trustProxy);
  app.use(expressLimit(options));
  app.get('/', (_req, res) => void res.send('ok'));
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  open.push(
    () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return urlOf(server.address());
}

async function fastifyApp(
  server: FastifyServerOptions,
  options: Parameters<typeof fastifyLimit>[1],
): Promise<string> {
  const app = Fastify(server);
  await app.register(fastifyLimit, options);
  app.get('/', async () => 'ok');
  await app.listen({ port: 0, host: '127.0.0.1' });
  open.push(() => app.close());
  return urlOf(app.server.address());
}

async function statuses(url: string, forwardedFor: readonly string[]): Promise<number[]> {
  const out: number[] = [];
  for (const xff of forwardedFor) {
    const res = await fetch(url, { headers: { 'x-forwarded-for': xff } });
    await res.arrayBuffer();
    out.push(res.status);
  }
  return out;
}

const admitted = (list: number[]): number => list.filter((s) => s === 200).length;

describe('ports written by a trusted proxy', () => {
  test('ip:port, one client on 20 source ports: 5 of 20 admitted, one key', async () => {
    const rec = recording(ipKey({ trustProxy: 'loopback' }));
    const url = await nodeApp({ limiter: limitOf(5), key: rec.key });
    const ports = Array.from({ length: 20 }, (_, i) => `203.0.113.9:${40000 + i}`);
    expect(admitted(await statuses(url, ports))).toBe(5);
    expect([...rec.seen]).toEqual(['ip:203.0.113.9']);
  });

  test('[v6]:port, then the /56 prefix', async () => {
    const rec = recording(ipKey({ trustProxy: 'loopback' }));
    const url = await nodeApp({ limiter: limitOf(5), key: rec.key });
    const ports = Array.from(
      { length: 20 },
      (_, i) => `[2001:db8:1:23a${i % 10}::${i + 1}]:${40000 + i}`,
    );
    expect(admitted(await statuses(url, ports))).toBe(5);
    expect([...rec.seen]).toEqual(['ip:2001:db8:1:2300::/56']);
  });

  test('a trusted hop written with a port is still walked through', async () => {
    const rec = recording(ipKey({ trustProxy: ['loopback', '10.0.0.0/8'] }));
    const url = await nodeApp({ limiter: limitOf(5), key: rec.key });
    await statuses(url, ['198.51.100.4:5000, 10.0.0.2:443']);
    expect([...rec.seen]).toEqual(['ip:198.51.100.4']);
  });
});

describe("the framework's own trust setting", () => {
  const clients = ['198.51.100.1', '198.51.100.2', '198.51.100.3', '198.51.100.1'];

  test("Express app.set('trust proxy', 1) with the default key: one bucket per client", async () => {
    const url = await expressApp(1, { limiter: limitOf(1), validate: false });
    expect(await statuses(url, clients)).toEqual([200, 200, 200, 429]);
  });

  test("Express 'trust proxy' as a list of ranges", async () => {
    const url = await expressApp('loopback, 10.0.0.0/8', { limiter: limitOf(1), validate: false });
    expect(await statuses(url, ['198.51.100.1, 10.0.0.1', '198.51.100.2, 10.0.0.9'])).toEqual([
      200, 200,
    ]);
  });

  test('ipKey({ trustProxy }) wins over the framework setting', async () => {
    const url = await expressApp(1, {
      limiter: limitOf(1),
      key: ipKey({ trustProxy: false }),
      validate: false,
    });
    expect(await statuses(url, clients)).toEqual([200, 429, 429, 429]);
  });

  test('Fastify({ trustProxy: 1 }) with the default key: one bucket per client', async () => {
    // Fastify takes a hop count at run time; its types leave the number out.
    const server = { trustProxy: 1 } as unknown as FastifyServerOptions;
    const url = await fastifyApp(server, { limiter: limitOf(1), validate: false });
    expect(await statuses(url, clients)).toEqual([200, 200, 200, 429]);
  });

  test('Fastify({ trustProxy: true }): per client, and warned about', async () => {
    const warnings: RateLimitWarning[] = [];
    const url = await fastifyApp(
      { trustProxy: true },
      { limiter: limitOf(1), onWarning: (w) => warnings.push(w) },
    );
    expect(await statuses(url, clients)).toEqual([200, 200, 200, 429]);
    expect(warnings.map((w) => w.code)).toEqual(['PERMISSIVE_TRUST_PROXY']);
    expect(warnings[0]!.message).toContain('Fastify');
  });
});

describe('warnings', () => {
  test('X-Forwarded-For from an untrusted peer: warned once, naming the settings', async () => {
    const warnings: RateLimitWarning[] = [];
    const url = await expressApp(undefined, {
      limiter: limitOf(10),
      onWarning: (w) => warnings.push(w),
    });
    await statuses(url, ['198.51.100.1', '198.51.100.2', '198.51.100.3']);
    expect(warnings.map((w) => w.code)).toEqual(['UNTRUSTED_X_FORWARDED_FOR']);
    expect(warnings[0]!.message).toContain('trustProxy');
    expect(warnings[0]!.message).toContain("Express's own trust setting");
    expect(warnings[0]!.help).toMatch(/#untrusted_x_forwarded_for$/);
  });

  test('no X-Forwarded-For, no warning', async () => {
    const warnings: RateLimitWarning[] = [];
    const url = await expressApp(undefined, {
      limiter: limitOf(10),
      onWarning: (w) => warnings.push(w),
    });
    await (await fetch(url)).arrayBuffer();
    expect(warnings).toEqual([]);
  });

  test("ipKey({ trustProxy: true }) and Express 'trust proxy' true are warned about", async () => {
    const warnings: RateLimitWarning[] = [];
    const onWarning = (w: RateLimitWarning): void => void warnings.push(w);
    const a = await nodeApp({ limiter: limitOf(10), key: ipKey({ trustProxy: true }), onWarning });
    const b = await expressApp(true, { limiter: limitOf(10), onWarning });
    await statuses(a, ['198.51.100.1', '198.51.100.2']);
    await statuses(b, ['198.51.100.1']);
    expect(warnings.map((w) => w.code)).toEqual([
      'PERMISSIVE_TRUST_PROXY',
      'PERMISSIVE_TRUST_PROXY',
    ]);
    expect(warnings[1]!.message).toContain('Express');
  });

  test('by default a warning is a process warning with its code', async () => {
    const seen: Error[] = [];
    const listener = (w: Error): void => void seen.push(w);
    process.on('warning', listener);
    try {
      const url = await nodeApp({ limiter: limitOf(10) });
      await statuses(url, ['198.51.100.1']);
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('warning', listener);
    }
    const ours = seen.filter((w) => w.name === 'FloodgateWarning');
    expect(ours.map((w) => (w as Error & { code?: string }).code)).toEqual([
      'UNTRUSTED_X_FORWARDED_FOR',
    ]);
  });
});
