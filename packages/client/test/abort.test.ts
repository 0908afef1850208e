import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchWithRetry, RetryLater, retry } from '../src/index.js';
import { refuseFirst, startServer, type TestServer } from './server.js';

let server: TestServer;
beforeAll(async () => {
  server = await startServer(refuseFirst({ 'Retry-After': '120' }, 1_000_000));
});
afterAll(() => server.close());

describe('AbortSignal', () => {
  it('aborting during a 120 s wait rejects with the reason within milliseconds', async () => {
    const controller = new AbortController();
    const reason = new Error('user gave up');
    let abortedAt = 0;
    const call = fetchWithRetry(
      `${server.url}/`,
      { signal: controller.signal },
      {
        maxDelayMs: 300_000,
        onRetry: () => {
          setTimeout(() => {
            abortedAt = Date.now();
            controller.abort(reason);
          }, 50);
        },
      },
    );
    await expect(call).rejects.toBe(reason);
    // Generous for a loaded machine; the point is "not 120 s".
    expect(Date.now() - abortedAt).toBeLessThan(2000);
  });

  it('options.signal works for a Request input too', async () => {
    const controller = new AbortController();
    const call = fetchWithRetry(new Request(`${server.url}/`), undefined, {
      signal: controller.signal,
      maxDelayMs: 300_000,
      onRetry: () => controller.abort('stop'),
    });
    await expect(call).rejects.toBe('stop');
  });

  it('also in retry(), with the signal passed to fn', async () => {
    const controller = new AbortController();
    const signals: AbortSignal[] = [];
    const call = retry(
      ({ signal }) => {
        signals.push(signal);
        throw new RetryLater(120_000);
      },
      { signal: controller.signal, maxDelayMs: 300_000, onRetry: () => controller.abort('bye') },
    );
    await expect(call).rejects.toBe('bye');
    expect(signals).toHaveLength(1);
    expect(signals[0]?.aborted).toBe(true);
  });

  it('still reaches the body of the returned response, as with fetch', async () => {
    const stream = await startServer((_req, res) => {
      res.writeHead(200);
      res.write('first chunk');
    });
    try {
      const controller = new AbortController();
      const res = await fetchWithRetry(`${stream.url}/`, { signal: controller.signal });
      expect(res.status).toBe(200);
      const reading = res.text();
      controller.abort(new Error('enough'));
      await expect(reading).rejects.toThrow();
    } finally {
      await stream.close();
    }
  });

  it('the process exits on its own after an abort during a 120 s wait', async () => {
    const script = fileURLToPath(new URL('./child/abort-wait.mjs', import.meta.url));
    const child = spawn(process.execPath, [script, `${server.url}/`], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
    });
    child.stderr.on('data', (d) => {
      out += d;
    });
    const killer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const [code, signal] = await once(child, 'exit');
    clearTimeout(killer);
    expect({ code, signal }).toEqual({ code: 0, signal: null });
    expect(out).toMatch(/^waiting 12\d{4}\n/);
    expect(out).toMatch(/rejected with the reason after \d+ ms/);
  });
});
