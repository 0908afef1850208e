// `interval: 60` is 60 ms; rate-limiter-flexible's users mean seconds there. A bare number under
// 1000 for a window or interval warns once (SHORT_INTERVAL); a string with its unit does not.
// warnOnce remembers codes per module instance: vitest gives this file its own.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseDuration } from '../src/duration.js';
import { isFloodgateError } from '../src/errors.js';
import {
  fixedWindow,
  leakyBucket,
  slidingWindow,
  slidingWindowLog,
  tokenBucket,
} from '../src/index.js';

afterEach(() => {
  vi.restoreAllMocks();
});

describe('SHORT_INTERVAL', () => {
  it('warns once for a bare number under 1000, never for a string with its unit', () => {
    const emit = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    // Meant as ms, and said so; or long enough not to be seconds in disguise.
    tokenBucket({ limit: 10, interval: '60ms' });
    fixedWindow({ limit: 10, window: '500 ms' });
    slidingWindow({ limit: 10, window: 1000 });
    leakyBucket({ limit: 10, interval: 60_000, queue: 5 });
    expect(emit).not.toHaveBeenCalled();

    tokenBucket({ limit: 10, interval: 60 });
    expect(emit).toHaveBeenCalledTimes(1);
    const [message, options] = emit.mock.calls[0]! as unknown as [
      string,
      { type: string; code: string },
    ];
    expect(options).toEqual({ type: 'FloodgateWarning', code: 'SHORT_INTERVAL' });
    expect(message).toContain('tokenBucket: interval: 60 is 60 ms');
    expect(message).toContain("'60s'");
    expect(message).toContain("'60ms'");

    // Once per process: the next ones say nothing.
    fixedWindow({ limit: 10, window: 30 });
    slidingWindowLog({ limit: 10, window: 999 });
    leakyBucket({ limit: 1, interval: 1, queue: 1 });
    expect(emit).toHaveBeenCalledTimes(1);
    expect(warn).not.toHaveBeenCalled();
  });

  it('the error for a bad duration string lists the accepted units', () => {
    for (const bad of ['5 min', '1w', '10 seconds', '']) {
      let error: unknown;
      try {
        tokenBucket({ limit: 10, interval: bad as '1s' });
      } catch (e) {
        error = e;
      }
      expect(isFloodgateError(error) && error.code).toBe('INVALID_POLICY');
      const message = (error as Error).message;
      expect(message).toContain(
        `tokenBucket: interval: cannot read duration ${JSON.stringify(bad)}`,
      );
      expect(message).toContain("'ms', 's', 'm', 'h' or 'd'");
    }
    expect(() => parseDuration(true, 'blockFor')).toThrow(
      /got boolean: .*'ms', 's', 'm', 'h' or 'd'/,
    );
  });
});
