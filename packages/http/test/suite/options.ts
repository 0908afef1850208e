import { type FloodgateError, fixedWindow, isFloodgateError } from '@floodgate/core';
import { describe, expect, test } from 'vitest';
import type { RateLimitOptions } from '../../src/index.js';
import type { SuiteContext } from '../support/context.js';
import { steadyMemoryStore } from '../support/stores.js';

async function rejection(build: () => Promise<unknown>): Promise<FloodgateError> {
  try {
    await build();
  } catch (error) {
    if (isFloodgateError(error)) return error;
    throw error;
  }
  throw new Error('expected the options to be refused');
}

export function optionTests(ctx: SuiteContext): void {
  describe('options are checked at construction', () => {
    const limiter = () => ctx.limiter(fixedWindow({ limit: 1, window: '1s' }));
    const cases: [string, () => RateLimitOptions, RegExp][] = [
      ['no limiter', () => ({}), /needs a `limiter`/],
      [
        'unknown option',
        () => ({ limiter: limiter(), max: 5 }) as RateLimitOptions,
        /unknown option "max" \(Floodgate's way: the policy's `limit`/,
      ],
      [
        "express-rate-limit's windowMs names the policy's window",
        () => ({ limiter: limiter(), windowMs: 60_000 }) as RateLimitOptions,
        /unknown option "windowMs" \(Floodgate's way: the policy's `window`/,
      ],
      [
        'limit as a number names the policy',
        () => ({ store: steadyMemoryStore(), limit: 100 }) as RateLimitOptions,
        /unknown option "limit" \(Floodgate's way: the policy's `limit`: `policy: fixedWindow/,
      ],
      [
        'standardHeaders names headers',
        () => ({ limiter: limiter(), standardHeaders: 'draft-8' }) as RateLimitOptions,
        /unknown option "standardHeaders" \(Floodgate's way: `headers: 'draft-6'/,
      ],
      [
        'message and statusCode name onLimited',
        () => ({ limiter: limiter(), message: 'slow down' }) as RateLimitOptions,
        /unknown option "message" \(Floodgate's way: `onLimited:/,
      ],
      [
        'keyGenerator names key',
        () => ({ limiter: limiter(), keyGenerator: () => 'k' }) as RateLimitOptions,
        /unknown option "keyGenerator" \(Floodgate's way: `key:/,
      ],
      [
        'requestPropertyName says where the decision is',
        () => ({ limiter: limiter(), requestPropertyName: 'rl' }) as RateLimitOptions,
        /unknown option "requestPropertyName" \(Floodgate's way: none needed, the decision is on `req.rateLimit`/,
      ],
      [
        'a peer option in a rule is named too',
        () => ({ rules: [{ limiter: limiter(), max: 5 }] }) as unknown as RateLimitOptions,
        /rules\[0\]: unknown option "max" \(Floodgate's way/,
      ],
      [
        'an unknown name of our own gets no made-up hint',
        () => ({ limiter: limiter(), frobnicate: true }) as RateLimitOptions,
        /^unknown option "frobnicate"$/,
      ],
      [
        'maxDelayMs negative',
        () => ({ limiter: limiter(), maxDelayMs: -1 }),
        /maxDelayMs must be a whole number ≥ 0 or Infinity/,
      ],
      [
        'maxQueued 0',
        () => ({ limiter: limiter(), maxQueued: 0 }),
        /maxQueued must be a whole number ≥ 1 or Infinity/,
      ],
      [
        'breaker next to a ready limiter',
        () => ({ limiter: limiter(), breaker: true }),
        /breaker only apply to a limiter built from `policy`/,
      ],
      [
        'bad header standard',
        () => ({ limiter: limiter(), headers: 'draft-9' as 'draft-8' }),
        /headers must be/,
      ],
      [
        'policy without store',
        () => ({ policy: fixedWindow({ limit: 1, window: '1s' }) }),
        /needs a `store`/,
      ],
      [
        'jitter min > max',
        () => ({ limiter: limiter(), retryAfterJitter: ['5s', '1s'] }),
        /min > max/,
      ],
      [
        'jitter not a duration',
        () => ({ limiter: limiter(), retryAfterJitter: '5 parsecs' }),
        /not a duration/,
      ],
      [
        'bad failure mode',
        () => ({ limiter: limiter(), onLimiterError: 'open' as 'fail-open' }),
        /onLimiterError/,
      ],
      ['cost 0', () => ({ limiter: limiter(), cost: 0 }), /cost must be/],
      [
        'key not a function',
        () => ({ limiter: limiter(), key: 'ip' as never }),
        /key must be a function/,
      ],
      [
        'store options next to a ready limiter',
        () => ({ limiter: limiter(), onStoreError: 'allow' as const }),
        /only apply to a limiter built from `policy`/,
      ],
      [
        'limiter and rules',
        () => ({ limiter: limiter(), rules: [{ limiter: limiter() }] }),
        /not both/,
      ],
      [
        'two rules, one policy name',
        () => ({
          rules: [
            { policy: fixedWindow({ name: 'a', limit: 1, window: '1s' }) },
            { policy: fixedWindow({ name: 'a', limit: 2, window: '1s' }) },
          ],
          store: steadyMemoryStore(),
        }),
        /distinct names/,
      ],
    ];
    for (const [name, options, message] of cases) {
      test(name, async () => {
        const error = await rejection(() => ctx.harness.build(options()));
        expect(error.code).toBe('INVALID_OPTION');
        expect(error.message).toMatch(message);
      });
    }
  });
}
