// The 429 body is written by concatenation; it must be byte for byte what JSON.stringify makes of
// the problem object, for any policy name and number a decision can carry.
import { createLimiter, type Decision, fixedWindow, type PolicyDecision } from '@floodgate/core';
// A seeded generator (mulberry32): every run checks the same table.
import { rng } from '@floodgate/testkit/redis';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterEach, describe, expect, test } from 'vitest';
import { tooManyRequestsProblem } from '../src/adapter/index.js';
import { rateLimit } from '../src/fastify/index.js';
import { headerKey } from '../src/index.js';
import { tooManyRequestsBody } from '../src/shared/problem-body.js';
import { send } from './support/context.js';
import { urlOf } from './support/harness.js';
import { steadyMemoryStore } from './support/stores.js';

// Pieces JSON escapes or could trip a hand-written escaper: quotes, backslashes, every control
// character, DEL, lone and paired surrogates, U+2028/2029, non-BMP, combining marks.
const AWKWARD = [
  '"',
  '\\',
  '\\"',
  '"\\',
  ...Array.from({ length: 32 }, (_, c) => String.fromCharCode(c)),
  '\u007f',
  '\ud800',
  '\udbff',
  '\udc00',
  '\udfff',
  '\ud83d\ude00',
  '\ude00\ud83d',
  '\u2028',
  '\u2029',
  'é',
  'e\u0301',
  '日本',
  '𝄞',
  '/',
  '</script>',
  ', ',
  '',
  ' ',
  'api',
  'per-user',
];

function awkwardString(random: () => number): string {
  const parts = Math.floor(random() * 5);
  let s = '';
  for (let i = 0; i < parts; i++) s += AWKWARD[Math.floor(random() * AWKWARD.length)];
  return s;
}

const NUMBERS = [
  0,
  -0,
  1,
  7,
  59.5,
  1e21,
  1e-7,
  -3,
  2 ** 53,
  Number.MAX_VALUE,
  Infinity,
  -Infinity,
  NaN,
];
const pick = <T>(random: () => number, list: readonly T[]): T =>
  list[Math.floor(random() * list.length)] as T;
const someNumber = (random: () => number): number =>
  random() < 0.5
    ? pick(random, NUMBERS)
    : Math.floor(random() * 100_000) / (random() < 0.2 ? 7 : 1);

function policy(random: () => number): PolicyDecision {
  const allowed = random() < 0.4;
  return {
    name: awkwardString(random),
    allowed,
    limit: someNumber(random),
    remaining: someNumber(random),
    resetAfterMs: someNumber(random),
    retryAfterMs: someNumber(random),
    delayMs: 0,
    windowMs: random() < 0.2 ? Infinity : someNumber(random),
    ...(random() < 0.2 ? { shadow: true } : {}),
  } as PolicyDecision;
}

function decision(random: () => number): Decision {
  const policies = Array.from({ length: Math.floor(random() * 4) }, () => policy(random));
  return { allowed: false, policies, binding: policies[0] } as unknown as Decision;
}

describe('the 429 problem body', () => {
  test('is JSON.stringify of the problem object, byte for byte, over 5 000 seeded decisions', () => {
    const random = rng(16);
    let escaped = 0;
    for (let i = 0; i < 5000; i++) {
      const d = decision(random);
      const retryAfter = someNumber(random);
      const expected = JSON.stringify(tooManyRequestsProblem(d, retryAfter));
      expect(tooManyRequestsBody(d, retryAfter)).toBe(expected);
      if (expected.includes('\\\\')) escaped++;
    }
    // The table did reach names that need escaping inside the detail string.
    expect(escaped).toBeGreaterThan(500);
  });

  test('each awkward piece alone, as the only violated policy name', () => {
    for (const name of AWKWARD) {
      const p = { ...policy(rng(1)), name, allowed: false, shadow: undefined };
      const d = { allowed: false, policies: [p], binding: p } as unknown as Decision;
      expect(tooManyRequestsBody(d, 3)).toBe(JSON.stringify(tooManyRequestsProblem(d, 3)));
    }
  });

  test('fields of other types than declared follow JSON.stringify too', () => {
    const odd = [undefined, null, 12, true, { toJSON: () => 'x' }, ['a']];
    for (const value of odd) {
      const p = { ...policy(rng(2)), allowed: false, name: value };
      const q = { ...policy(rng(3)), allowed: false, limit: value };
      const d = { allowed: false, policies: [p, q], binding: p } as unknown as Decision;
      expect(tooManyRequestsBody(d, 2)).toBe(JSON.stringify(tooManyRequestsProblem(d, 2)));
    }
  });
});

describe('on a real Fastify server', () => {
  const apps: FastifyInstance[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((a) => a.close()));
  });

  test('the body sent is JSON.stringify of the problem onLimited was shown', async () => {
    const seen: unknown[] = [];
    const app = Fastify();
    apps.push(app);
    // Policy names are printable ASCII: the quote and the backslash are what needs escaping.
    const name = 'say "hi" \\ back';
    await app.register(rateLimit, {
      limiter: createLimiter({
        store: steadyMemoryStore(),
        policy: fixedWindow({ name, limit: 1, window: '1m' }),
      }),
      key: headerKey('x-api-key'),
      validate: { UNVERIFIED_HEADER_KEY: false },
      // Sees the problem object, then leaves the answer to the default body.
      onLimited: ({ problem }) => {
        seen.push(problem);
        return undefined;
      },
    });
    app.get('/', async () => 'ok');
    await app.listen({ port: 0, host: '127.0.0.1' });
    const url = urlOf(app.server.address());
    expect((await send(url, { 'x-api-key': 'a' })).status).toBe(200);
    const denied = await send(url, { 'x-api-key': 'a' });
    expect(denied.status).toBe(429);
    expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(seen).toHaveLength(1);
    expect(denied.text).toBe(JSON.stringify(seen[0]));
    expect(denied.json()).toMatchObject({ violated: [name] });
    // Quoted in the detail, and that quoting escaped once more by the JSON around it.
    expect(denied.text).toContain(JSON.stringify(`for ${JSON.stringify(name)};`).slice(1, -1));
  });
});
