// The apps under load: one route, GET /hello answering `ok`, on Express, Fastify and Hono (on
// @hono/node-server), each bare, with Floodgate's adapter, or with the framework's usual peer
// limiter. Every limiter counts a fixed window of `limit` per `windowMs`, keyed by the
// x-api-key header, with its library's default headers: what an app gets out of the box.

import fastifyRateLimit from '@fastify/rate-limit';
import { createLimiter, fixedWindow } from '@floodgate/core';
import { headerKey } from '@floodgate/http';
import { rateLimit as floodgateExpress } from '@floodgate/http/express';
import { rateLimit as floodgateFastify } from '@floodgate/http/fastify';
import { rateLimit as floodgateHono } from '@floodgate/http/hono';
import { IoRedisStore } from '@floodgate/ioredis';
import { MemoryStore } from '@floodgate/memory';
import { serve } from '@hono/node-server';
import express from 'express';
import { rateLimit as expressRateLimit } from 'express-rate-limit';
import fastify from 'fastify';
import { Hono } from 'hono';
import { RedisStore as HonoRedisStore, rateLimiter as honoRateLimiter } from 'hono-rate-limiter';
import { Redis } from 'ioredis';
import { RedisStore as RateLimitRedis } from 'rate-limit-redis';

import { HEADER, ROUTE } from './config.mjs';

const HOST = '127.0.0.1';

/** Each peer prefixes its Redis keys its own way; Floodgate gets a prefix of its own per app. */
function floodgateLimiter(spec, redis) {
  return createLimiter({
    store: redis === undefined ? new MemoryStore() : new IoRedisStore(redis),
    policy: fixedWindow({ name: 'api', limit: spec.limit, window: spec.windowMs }),
  });
}

// The bench sends the header unverified on purpose: the warning would only say so.
const floodgateKey = () => headerKey(HEADER);
const validate = { UNVERIFIED_HEADER_KEY: false };

// Floodgate configured to send the headers the framework's peer sends by default (issue 35
// compares like for like this way, and with each library's defaults): express-rate-limit 8 and
// @fastify/rate-limit send X-RateLimit-Limit/-Remaining/-Reset, hono-rate-limiter the draft-6
// RateLimit-* fields; none of them adds Access-Control-Expose-Headers.
const PEER_HEADERS = {
  express: { headers: false, legacyHeaders: true, exposeHeaders: false },
  fastify: { headers: false, legacyHeaders: true, exposeHeaders: false },
  hono: { headers: 'draft-6', exposeHeaders: false },
};

/** The adapter's options of a Floodgate app: the defaults, or the peer's header set. */
function floodgateOptions(framework, spec, redis) {
  return {
    limiter: floodgateLimiter(spec, redis),
    key: floodgateKey(),
    validate,
    ...(spec.limiter === 'floodgate-peer-headers' ? PEER_HEADERS[framework] : {}),
  };
}
const isFloodgate = (spec) => spec.limiter.startsWith('floodgate');

async function expressApp(spec, redis) {
  const app = express();
  if (isFloodgate(spec)) {
    app.use(floodgateExpress(floodgateOptions('express', spec, redis)));
  } else if (spec.limiter === 'peer') {
    app.use(
      expressRateLimit({
        windowMs: spec.windowMs,
        limit: spec.limit,
        keyGenerator: (req) => req.headers[HEADER],
        ...(redis === undefined
          ? {}
          : { store: new RateLimitRedis({ sendCommand: (...args) => redis.call(...args) }) }),
      }),
    );
  }
  app.get(ROUTE, (_req, res) => {
    res.send('ok');
  });
  return listen((port, done) => {
    const server = app.listen(port, HOST, () => done(server));
  });
}

async function fastifyApp(spec, redis) {
  const app = fastify({ logger: false });
  if (isFloodgate(spec)) {
    await app.register(floodgateFastify, floodgateOptions('fastify', spec, redis));
  } else if (spec.limiter === 'peer') {
    await app.register(fastifyRateLimit, {
      max: spec.limit,
      timeWindow: spec.windowMs,
      keyGenerator: (req) => req.headers[HEADER],
      ...(redis === undefined ? {} : { redis }),
    });
  }
  app.get(ROUTE, async () => 'ok');
  await app.listen({ port: 0, host: HOST });
  return { port: app.server.address().port, close: () => app.close() };
}

/** hono-rate-limiter's RedisStore speaks an Upstash-like client: ioredis, adapted. */
function honoRedisClient(redis) {
  return {
    scriptLoad: (script) => redis.script('LOAD', script),
    evalsha: (sha, keys, args) => redis.evalsha(sha, keys.length, ...keys, ...args),
    decr: (key) => redis.decr(key),
    del: (key) => redis.del(key),
  };
}

async function honoApp(spec, redis) {
  const app = new Hono();
  if (isFloodgate(spec)) {
    app.use('*', floodgateHono(floodgateOptions('hono', spec, redis)));
  } else if (spec.limiter === 'peer') {
    app.use(
      '*',
      honoRateLimiter({
        windowMs: spec.windowMs,
        limit: spec.limit,
        keyGenerator: (c) => c.req.header(HEADER),
        ...(redis === undefined
          ? {}
          : { store: new HonoRedisStore({ client: honoRedisClient(redis) }) }),
      }),
    );
  }
  app.get(ROUTE, (c) => c.text('ok'));
  return listen((port, done) => {
    const server = serve({ fetch: app.fetch, port, hostname: HOST }, () => done(server));
  });
}

async function listen(start) {
  const server = await new Promise((resolve) => start(0, resolve));
  return {
    port: server.address().port,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const APPS = { express: expressApp, fastify: fastifyApp, hono: honoApp };

/**
 * Starts one app on a free loopback port.
 * @param {{ framework: 'express' | 'fastify' | 'hono',
 *   limiter: 'bare' | 'floodgate' | 'floodgate-peer-headers' | 'peer',
 *   redisUrl?: string, limit: number, windowMs: number }} spec
 */
export async function startApp(spec) {
  const redis =
    spec.redisUrl === undefined ? undefined : new Redis(spec.redisUrl, { lazyConnect: true });
  await redis?.connect();
  const app = await APPS[spec.framework](spec, redis);
  return {
    port: app.port,
    async close() {
      await app.close();
      redis?.disconnect();
    },
  };
}
