import type { Options } from 'tsup';

/** The one build every published package uses: ESM + CJS + `.d.ts`, for Node 20. */
export function packageBuild(entry: Record<string, string>): Options {
  return {
    entry,
    format: ['esm', 'cjs'],
    dts: true,
    clean: true,
    sourcemap: true,
    target: 'node20',
  };
}
