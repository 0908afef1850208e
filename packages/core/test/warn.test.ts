// Where warnings go. The runtimes themselves are covered by tests/runtimes (a real workerd, Bun
// and Deno print them); here, on Node, the choice of channel for each runtime's marks.
import { afterEach, describe, expect, it, vi } from 'vitest';
import { printWarning, warnOnce } from '../src/warn.js';

afterEach(() => {
  vi.unstubAllGlobals();
  vi.restoreAllMocks();
});

function channels() {
  const emitted = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
  const consoled = vi.spyOn(console, 'warn').mockImplementation(() => {});
  return { emitted, consoled };
}

describe('printWarning', () => {
  it('is a FloodgateWarning process warning on Node', () => {
    const { emitted, consoled } = channels();
    printWarning('SOME_CODE', 'the message');
    expect(emitted).toHaveBeenCalledWith('the message', {
      type: 'FloodgateWarning',
      code: 'SOME_CODE',
    });
    expect(consoled).not.toHaveBeenCalled();
  });

  it("goes to the console where the process is workerd's shim, whose emitWarning prints nothing", () => {
    // What workerd shows with nodejs_compat: a process that says it is Node, and its own agent.
    vi.stubGlobal('navigator', { userAgent: 'Cloudflare-Workers' });
    expect(process.release.name).toBe('node');
    const { emitted, consoled } = channels();
    printWarning('SOME_CODE', 'the message');
    expect(emitted).not.toHaveBeenCalled();
    expect(consoled).toHaveBeenCalledWith('FloodgateWarning [SOME_CODE]: the message');
  });

  it('is a process warning on Node 21+ (navigator says Node.js), Bun and Deno', () => {
    const { emitted, consoled } = channels();
    vi.stubGlobal('navigator', { userAgent: 'Node.js/22' });
    printWarning('A', 'node');
    vi.stubGlobal('navigator', { userAgent: 'Bun/1.4.4' });
    vi.spyOn(process, 'versions', 'get').mockReturnValue({ ...process.versions, bun: '1.4.4' });
    printWarning('B', 'bun');
    expect(emitted).toHaveBeenCalledTimes(2);
    expect(consoled).not.toHaveBeenCalled();
  });
});

describe('warnOnce', () => {
  it('prints each code once', () => {
    const { emitted } = channels();
    warnOnce('ONCE_CODE', 'first');
    warnOnce('ONCE_CODE', 'second');
    warnOnce('OTHER_CODE', 'third');
    expect(emitted.mock.calls.map((c) => c[0])).toEqual(['first', 'third']);
  });
});
