import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLimiter, tokenBucket } from '@floodgate/core';
import { formatRateLimitHeaders } from '@floodgate/core/headers';
import { MemoryStore } from '@floodgate/memory';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startServer, type TestServer } from './server.js';

// The built ESM bundle (both entries and their shared chunk) and its two dependencies, served as files: the page has no bundler and
// no Node, so anything Node-only in them fails to load here.
const here = dirname(fileURLToPath(import.meta.url));
const require = createRequire(import.meta.url);
const coreDist = join(dirname(require.resolve('@floodgate/core/package.json')), 'dist');
const sfDist = join(
  dirname(createRequire(join(coreDist, '..', 'package.json')).resolve('structured-headers')),
  '..',
  'dist',
);
const ROOTS: Record<string, string> = {
  client: join(here, '..', 'dist'),
  core: coreDist,
  sf: sfDist,
};

const PAGE = `<!doctype html>
<script type="importmap">
{ "imports": { "@floodgate/core/headers": "/core/headers/index.js", "structured-headers": "/sf/index.js" } }
</script>
<script type="module">
  import * as client from '/client/index.js';
  import * as models from '/client/model-apis/index.js';
  window.client = client;
  window.models = models;
  window.ready = true;
</script>`;

const CORS = {
  'Access-Control-Allow-Origin': '*',
  'Access-Control-Expose-Headers': 'Retry-After, RateLimit, RateLimit-Policy',
};

/**
 * Debian's Chromium, or Homebrew's, or CHROMIUM_PATH: the same places `scripts/setup-system.sh`
 * installs to and looks in. Missing, the test fails and names the script (it never skips).
 */
function chromiumPath(): string {
  const candidates = [
    process.env.CHROMIUM_PATH,
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
    '/Applications/Chromium.app/Contents/MacOS/Chromium',
  ];
  const found = candidates.find((p): p is string => !!p && existsSync(p));
  if (!found) {
    throw new Error(
      'No Chromium for the browser test: run `sh scripts/setup-system.sh` from the repository root (or set CHROMIUM_PATH)',
    );
  }
  return found;
}

let site: TestServer;
let api: TestServer;
let browser: Browser;
let page: Page;
const pageErrors: string[] = [];
const hits: Record<string, number[]> = {};
const limiter = createLimiter({
  store: new MemoryStore(),
  policy: tokenBucket({ limit: 5, interval: '1s', burst: 5, name: 'api' }),
});

beforeAll(async () => {
  site = await startServer(async (req, res) => {
    const [, root, ...rest] = (req.url ?? '/').split('/');
    const base = root ? ROOTS[root] : undefined;
    if (!base) return void res.writeHead(200, { 'content-type': 'text/html' }).end(PAGE);
    const file = normalize(join(base, ...rest));
    if (!file.startsWith(base) || !existsSync(file)) return void res.writeHead(404).end();
    const type = extname(file) === '.js' ? 'text/javascript' : 'application/json';
    res.writeHead(200, { 'content-type': type }).end(await readFile(file));
  });

  api = await startServer((req, res) => {
    const path = req.url ?? '/';
    hits[path] ??= [];
    const n = hits[path].push(Date.now());
    if (path === '/retry' || path === '/hidden') {
      const headers = path === '/retry' ? CORS : { 'Access-Control-Allow-Origin': '*' };
      if (n === 1) return void res.writeHead(429, { ...headers, 'Retry-After': '1' }).end();
      return void res.writeHead(200, headers).end('ok');
    }
    limiter.limit('browser').then((d) => {
      res.writeHead(d.allowed ? 200 : 429, { ...CORS, ...formatRateLimitHeaders(d) }).end();
    });
  });

  browser = await chromium.launch({
    executablePath: chromiumPath(),
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = await browser.newPage();
  page.on('pageerror', (e) => pageErrors.push(String(e)));
  await page.goto(`${site.url}/`);
  await page.waitForFunction(() => (globalThis as { ready?: boolean }).ready === true);
});

afterAll(async () => {
  await browser?.close();
  await site?.close();
  await api?.close();
});

interface PageResult {
  status: number;
  sources: string[];
  serverDelays: (number | undefined)[];
  node: string;
}

/** Runs a withRetry call in the page against the cross-origin API. */
function callInPage(path: string): Promise<PageResult> {
  return page.evaluate(
    async ({ url }) => {
      // biome-ignore lint/suspicious/noExplicitAny: the module namespace the page loaded.
      const { withRetry } = (globalThis as any).client;
      const sources: string[] = [];
      const serverDelays: (number | undefined)[] = [];
      const f = withRetry(fetch, {
        onRetry: (e: { source: string; serverDelayMs?: number }) => {
          sources.push(e.source);
          serverDelays.push(e.serverDelayMs);
        },
      });
      const res = await f(url);
      return { status: res.status, sources, serverDelays, node: typeof process };
    },
    { url: `${api.url}${path}` },
  );
}

describe('in a real browser (Chromium), from the built ESM bundle', () => {
  it('loads without Node, the model-apis subpath too', async () => {
    expect(pageErrors).toEqual([]);
    const read = await page.evaluate(() => {
      // biome-ignore lint/suspicious/noExplicitAny: the module namespace the page loaded.
      const { modelApiDelay } = (globalThis as any).models;
      return modelApiDelay(new Headers({ 'retry-after-ms': '1500' }));
    });
    expect(read).toEqual({ delayMs: 1500, source: 'retry-after-ms' });
  });

  it('reads a cross-origin Retry-After exposed by CORS and waits as told', async () => {
    const result = await callInPage('/retry');
    expect(result).toEqual({
      status: 200,
      sources: ['retry-after'],
      serverDelays: [1000],
      node: 'undefined',
    });
    const [first, second] = hits['/retry'] as number[];
    expect((second as number) - (first as number)).toBeGreaterThanOrEqual(1000);
  });

  it('without Access-Control-Expose-Headers the header is invisible, and backoff stands in', async () => {
    const result = await callInPage('/hidden');
    expect(result.status).toBe(200);
    expect(result.sources).toEqual(['backoff']);
  });

  it('paces from the RateLimit header: 20 requests at 5/s, zero 429s', async () => {
    const statuses = await page.evaluate(async (url) => {
      // biome-ignore lint/suspicious/noExplicitAny: the module namespace the page loaded.
      const { withRetry } = (globalThis as any).client;
      const f = withRetry(fetch, { pacing: true, retries: 0 });
      const out: number[] = [];
      for (let i = 0; i < 20; i++) out.push((await f(url)).status);
      return out;
    }, `${api.url}/paced`);
    expect(statuses).toHaveLength(20);
    expect(statuses.filter((s) => s === 429)).toEqual([]);
    expect(hits['/paced']).toHaveLength(20);
  });
});
