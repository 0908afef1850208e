import { type ChildProcess, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';

/**
 * The tests every example app runs, whatever its framework: it starts with the command its
 * README gives and enforces ten requests a minute per client. `testFile` is the calling test's
 * `import.meta.url`; the app is the package one folder up. `more` adds an app's own tests.
 */
export function exampleAppTests(testFile: string, more?: (url: () => string) => void): void {
  const dir = resolve(dirname(fileURLToPath(testFile)), '..');
  const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as {
    name: string;
    scripts: { start: string };
  };

  let child: ChildProcess | undefined;
  let url = '';

  /** Runs the package's start script as the README says, on a free port, until it says where it listens. */
  function startApp(): Promise<string> {
    const [command, ...args] = pkg.scripts.start.split(' ');
    const proc = spawn(command === 'node' ? process.execPath : command!, args, {
      cwd: dir,
      env: { ...process.env, PORT: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child = proc;
    return new Promise((resolvePromise, reject) => {
      let out = '';
      const timer = setTimeout(
        () => reject(new Error(`no "listening on" within 20 s:\n${out}`)),
        20_000,
      );
      const read = (chunk: Buffer): void => {
        out += chunk.toString();
        const m = /listening on (http:\/\/\S+)/.exec(out);
        if (m) {
          clearTimeout(timer);
          resolvePromise(m[1]!);
        }
      };
      proc.stdout!.on('data', read);
      proc.stderr!.on('data', (chunk: Buffer) => {
        out += chunk.toString();
      });
      proc.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the app exited with ${code}:\n${out}`));
      });
    });
  }

  beforeAll(async () => {
    url = await startApp();
  }, 30_000);
  afterAll(() => {
    child?.kill();
  });

  describe(`${pkg.name}: the app started by its README command`, () => {
    test('the README gives the command that starts it', () => {
      const readme = readFileSync(join(dir, 'README.md'), 'utf8');
      expect(readme).toContain(`pnpm --filter ${pkg.name} start`);
      expect(pkg.scripts.start).toBe('node src/server.mjs');
    });

    test('ten requests a minute per client, then 429 with Retry-After and a problem body', async () => {
      for (let i = 0; i < 10; i++) {
        const ok = await fetch(url);
        expect(ok.status).toBe(200);
        expect(ok.headers.get('ratelimit')).toMatch(new RegExp(`^"api";r=${9 - i};t=\\d+$`));
        await ok.arrayBuffer();
      }
      const denied = await fetch(url);
      expect(denied.status).toBe(429);
      expect(Number(denied.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      expect(denied.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(await denied.json()).toMatchObject({ status: 429, violated: ['api'] });
      // A caller with an API key has its own quota.
      const keyed = await fetch(url, { headers: { 'x-api-key': 'k_123' } });
      expect(keyed.status).toBe(200);
      expect(keyed.headers.get('ratelimit')).toMatch(/^"api";r=9;t=\d+$/);
    });
  });

  more?.(() => url);
}
