import { describe, expect, it } from 'vitest';
import { Breaker, type BreakerOptions } from '../src/breaker.js';
import { FloodgateError } from '../src/errors.js';
import {
  fixedWindow,
  leakyBucket,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';
import { createLimiter } from '../src/limiter.js';
import { checkOptions, type OptionNames } from '../src/options.js';
import { RedisStore } from '../src/redis/store.js';
import type { RedisTransport } from '../src/redis/transport.js';
import { MapStore } from './map-store.js';

function refusal(run: () => unknown): FloodgateError {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(FloodgateError);
    return error as FloodgateError;
  }
  throw new Error('expected a FloodgateError, nothing was thrown');
}

describe('checkOptions', () => {
  const NAMES = { a: true, b: true } as const satisfies OptionNames<{ a?: number; b: string }>;

  it('passes the declared names, refuses the first other one with label, code and hint', () => {
    expect(() => checkOptions('thing', { a: 1, b: 'x' }, NAMES)).not.toThrow();
    const e = refusal(() => checkOptions('thing', { a: 1, c: 2 }, NAMES));
    expect([e.code, e.message]).toEqual(['INVALID_OPTION', 'thing: unknown option "c"']);
    const p = refusal(() =>
      checkOptions('', { c: 2 }, ['a'], { code: 'INVALID_POLICY', hint: (k) => ` (${k}?)` }),
    );
    expect([p.code, p.message]).toEqual(['INVALID_POLICY', 'unknown option "c" (c?)']);
  });

  it("reads own enumerable keys only, and no prototype's name is an option", () => {
    const inherited = Object.create({ c: 1 }) as object;
    Object.defineProperty(inherited, 'hidden', { value: 1, enumerable: false });
    expect(() => checkOptions('thing', inherited, NAMES)).not.toThrow();
    expect(refusal(() => checkOptions('thing', { toString: 1 }, NAMES)).message).toBe(
      'thing: unknown option "toString"',
    );
    const proto = JSON.parse('{"__proto__": 1}') as object;
    expect(refusal(() => checkOptions('thing', proto, NAMES)).message).toBe(
      'thing: unknown option "__proto__"',
    );
  });

  it('a declaration that misses a key or lists an extra one does not compile', () => {
    interface Two {
      a?: number;
      b?: number;
    }
    // @ts-expect-error b is missing
    const missing = { a: true } as const satisfies OptionNames<Two>;
    // @ts-expect-error c is not an option of Two
    const extra = { a: true, b: true, c: true } as const satisfies OptionNames<Two>;
    // @ts-expect-error an option's entry is `true`, nothing else
    const wrong = { a: true, b: false } as const satisfies OptionNames<Two>;
    const right = { a: true, b: true } as const satisfies OptionNames<Two>;
    const breaker = {
      failures: true,
      windowMs: true,
      cooldownMs: true,
      probes: true,
      onStateChange: true,
    } as const satisfies OptionNames<BreakerOptions>;
    expect([missing, extra, wrong, right, breaker].map((n) => Object.keys(n).length)).toEqual([
      1, 3, 2, 2, 5,
    ]);
  });
});

describe('every call site refuses an unknown option before any store is touched', () => {
  it('createLimiter: INVALID_OPTION, the store never called', async () => {
    const store = new MapStore();
    const policy = fixedWindow({ limit: 1, window: '1s' });
    const e = refusal(() => createLimiter({ store, policy, limt: 5 } as never));
    expect([e.code, e.message]).toEqual(['INVALID_OPTION', 'unknown option "limt"']);
    // A known option still passes: the declaration holds every name of LimiterOptions.
    await createLimiter({ store, policy, prefix: 'p', timeoutMs: false }).limit('u');
    expect(store.calls).toBe(1);
    refusal(() => createLimiter({ store, policy, breaker: { failure: 3 } } as never));
    expect(store.calls).toBe(1);
  });

  it('Breaker: INVALID_OPTION naming breaker', () => {
    const e = refusal(() => new Breaker({ failures: 3, cooldown: 5 } as never));
    expect([e.code, e.message]).toEqual(['INVALID_OPTION', 'breaker: unknown option "cooldown"']);
    expect(new Breaker({ failures: 3, cooldownMs: 5, probes: 1, windowMs: 9 }).state).toBe(
      'closed',
    );
  });

  it.each([
    ['fixedWindow', () => fixedWindow({ limit: 1, window: '1s', interval: '1s' } as never)],
    ['slidingWindow', () => slidingWindow({ limit: 1, window: '1s', burst: 2 } as never)],
    ['slidingWindowLog', () => slidingWindowLog({ limit: 1, window: '1s', queue: 2 } as never)],
    ['tokenBucket', () => tokenBucket({ limit: 1, interval: '1s', queue: 2 } as never)],
    ['leakyBucket', () => leakyBucket({ limit: 1, interval: '1s', burst: 2 } as never)],
  ])('%s: INVALID_POLICY naming the factory', (factory, build) => {
    const e = refusal(build);
    expect(e.code).toBe('INVALID_POLICY');
    expect(e.message).toMatch(new RegExp(`^${factory}: unknown option "(interval|burst|queue)"$`));
  });

  it('the bucket factories take their own sizing option, and the window ones take name', () => {
    expect(tokenBucket({ limit: 2, interval: '1s', burst: 4, name: 't' }).name).toBe('t');
    expect(leakyBucket({ limit: 2, interval: '1s', queue: 4, name: 'l' }).name).toBe('l');
    expect(fixedWindow({ limit: 2, window: '1s', name: 'f' }).name).toBe('f');
  });

  it('RedisStore: INVALID_OPTION naming the client, nothing sent', () => {
    let sent = 0;
    const transport: RedisTransport = {
      label: 'TestRedisStore',
      canBatch: true,
      send: async () => {
        sent++;
        return null;
      },
      isReady: () => true,
    };
    const e = refusal(() => new RedisStore(transport, { clock: 'client', replica: 1 } as never));
    expect([e.code, e.message]).toEqual([
      'INVALID_OPTION',
      'TestRedisStore: unknown option "replica"',
    ]);
    expect(sent).toBe(0);
  });
});
