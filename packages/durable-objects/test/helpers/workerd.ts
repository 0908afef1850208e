// Runs a fixture Worker in workerd through miniflare: the Worker is bundled with esbuild from its
// TypeScript (this package's src included, so the tests need no build), `cloudflare:workers`
// left to the runtime, and its FloodgateObject class bound as a SQLite-backed Durable Object.
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { Miniflare, type MiniflareOptions, type WorkerOptions } from 'miniflare';

/** The newest date the miniflare in devDependencies runs everywhere this package is tested. */
export const COMPATIBILITY_DATE = '2026-07-01';

const cache = new Map<string, Promise<string>>();

/** The bundle (ESM) of a Worker, its path from the package root; built once per test file. */
export function bundle(path: string): Promise<string> {
  let code = cache.get(path);
  if (code === undefined) {
    const entry = fileURLToPath(new URL(`../../${path}`, import.meta.url));
    code = build({
      entryPoints: [entry],
      bundle: true,
      format: 'esm',
      platform: 'browser',
      conditions: ['workerd', 'worker', 'browser'],
      target: 'es2022',
      external: ['cloudflare:*'],
      write: false,
      logLevel: 'silent',
    }).then((r) => r.outputFiles[0]!.text);
    cache.set(path, code);
  }
  return code;
}

/** A Worker of `path`, its `FloodgateObject` class bound as `FLOODGATE` (SQLite-backed). */
export async function fixtureWorker(
  path: string,
  extra: Partial<WorkerOptions> = {},
): Promise<WorkerOptions> {
  return {
    name: 'floodgate',
    modules: true,
    script: await bundle(path),
    compatibilityDate: COMPATIBILITY_DATE,
    durableObjects: { FLOODGATE: { className: 'FloodgateObject', useSQLite: true } },
    ...extra,
  } as WorkerOptions;
}

/**
 * Starts workerd with `workers`. `persist`: a directory for Durable Object storage; `inspect`:
 * lets the test read an object's SQLite storage (`unsafeGetDurableObjectStorage`).
 */
export async function startWorkerd(
  workers: WorkerOptions[],
  options: { persist?: string; inspect?: boolean } = {},
): Promise<{ mf: Miniflare; url: URL }> {
  const mfOptions = {
    workers,
    ...(options.persist === undefined ? {} : { durableObjectsPersist: options.persist }),
    ...(options.inspect === true ? { unsafeInspectDurableObjects: true } : {}),
  } as MiniflareOptions;
  const mf = new Miniflare(mfOptions);
  const url = await mf.ready;
  return { mf, url };
}
