// Several hammer processes (test/deno/hammer.ts, bundled) on one Deno KV file: what the writers
// test and the measure script share. Deno runs Deno.openKv, Node runs @deno/kv.
import { mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { HammerConfig } from '../deno/hammer.js';
import { bundle, denoRun, type Exit, runToEnd } from './deno.js';

const require = createRequire(import.meta.url);
// The ES module build of @deno/kv (its package exports only the CJS entry's path to resolve).
const kvModule = pathToFileURL(
  require.resolve('@deno/kv').replace(/script[\\/]npm\.js$/, 'esm/npm.js'),
).href;

export type Runtime = 'deno' | 'node';

/** What a run sets itself: the rest of a hammer's config. */
export type HammerJob = Omit<HammerConfig, 'path' | 'kvModule' | 'worker' | 'workers' | 'prefix'>;

/** A temp directory with the bundled hammer; `run` starts one process per runtime per call. */
export interface Hammers {
  /** The temp directory, for a KV file of the caller's own (`run`'s `on`). */
  readonly dir: string;
  /**
   * One process per runtime given, all on one fresh KV file (or `on.path`, keys under
   * `on.prefix`); their exits, in that order.
   */
  run(
    runtimes: readonly Runtime[],
    job: HammerJob,
    on?: { readonly path: string; readonly prefix: string },
  ): Promise<Exit[]>;
  /** Removes the directory (its KV files too). */
  dispose(): void;
}

/** Bundles the hammer into a fresh temp directory named after `name`. */
export async function hammers(name: string, prefix: string, timeoutMs: number): Promise<Hammers> {
  const dir = mkdtempSync(join(tmpdir(), `floodgate-deno-kv-${name}-`));
  const program = join(dir, 'hammer.mjs');
  await bundle(new URL('../deno/hammer.ts', import.meta.url).pathname, program);
  let runs = 0;
  return {
    dir,
    run(runtimes, job, on) {
      const path = on?.path ?? join(dir, `kv${++runs}.sqlite`);
      // The first process to fail ends the others: they would wait for it at the barrier.
      const failed = new AbortController();
      return Promise.all(
        runtimes.map(async (runtime, worker) => {
          const config: HammerConfig = {
            ...job,
            path,
            kvModule,
            worker,
            workers: runtimes.length,
            prefix: on?.prefix ?? `${prefix}${runs}`,
          };
          const arg = JSON.stringify(config);
          const exit = await (runtime === 'deno'
            ? denoRun(program, dir, [arg], timeoutMs, failed.signal)
            : runToEnd(process.execPath, [program, arg], dir, timeoutMs, failed.signal));
          if (exit.code !== 0) failed.abort();
          return exit;
        }),
      );
    },
    dispose: () => rmSync(dir, { recursive: true, force: true }),
  };
}
