// Running test programs in Deno from a vitest test: bundle a TypeScript entry with esbuild (the
// workspace packages resolved as Node resolves them, so Deno needs no node_modules and no
// config), then run it with the deno binary from npm (the `deno` dev dependency).
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { build } from 'esbuild';

const require = createRequire(import.meta.url);

/**
 * The deno executable of the `deno` package. pnpm runs no install script of it (the root
 * package.json ignores its build), so on a fresh install the executable is still only in its
 * platform package: the package's own `runInstall` finds it there (copying it beside itself, as
 * its `bin.cjs` does on a first run) and returns its path.
 */
export const DENO: string = (() => {
  const here = join(dirname(require.resolve('deno/package.json')), 'deno');
  if (existsSync(here)) return here;
  return (require('deno/install_api.cjs') as { runInstall(): string }).runInstall();
})();

/** Bundles `entry` (a path) into one ES module at `outfile`; `external` stays an import. */
export async function bundle(entry: string, outfile: string, external: string[] = []) {
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    format: 'esm',
    platform: 'neutral',
    mainFields: ['module', 'main'],
    conditions: ['import', 'default'],
    target: 'es2022',
    external,
    logLevel: 'silent',
  });
}

export interface Exit {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `command args` in `cwd` to its end (killed after `timeoutMs`, or when `signal` aborts);
 * resolves with its output.
 */
export function runToEnd(
  command: string,
  args: readonly string[],
  cwd: string,
  timeoutMs: number,
  signal?: AbortSignal,
): Promise<Exit> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd,
      env: { ...process.env, NO_COLOR: '1', DENO_NO_UPDATE_CHECK: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const kill = () => child.kill('SIGKILL');
    signal?.addEventListener('abort', kill, { once: true });
    child.on('close', () => signal?.removeEventListener('abort', kill));
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** `deno run` of a bundled program with KV and only `dir` readable and writable. */
export function denoRun(
  file: string,
  dir: string,
  args: readonly string[],
  timeoutMs: number,
  signal?: AbortSignal,
) {
  const flags = ['run', '--no-config', '--no-lock', '--unstable-kv'];
  flags.push(`--allow-read=${dir}`, `--allow-write=${dir}`);
  return runToEnd(DENO, [...flags, file, ...args], dir, timeoutMs, signal);
}
