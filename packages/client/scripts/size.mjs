// The size budget and the "no Node-only imports" check, run by `pnpm lint` after the build.
// Bundles dist/index.js the way a browser app would (all dependencies in, platform 'browser',
// minified) and gzips it. A `node:` import, or any Node built-in, fails the bundle itself:
// esbuild cannot resolve them for the browser platform.
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** The budget stated in README.md ("Size"). */
export const BUDGET_BYTES = 8192;

export async function measure() {
  const entry = fileURLToPath(new URL('../dist/index.js', import.meta.url));
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    metafile: true,
    logLevel: 'silent',
  });
  const code = result.outputFiles[0].contents;
  const inputs = Object.keys(result.metafile.inputs);
  return { minified: code.length, gzipped: gzipSync(code, { level: 9 }).length, inputs };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { minified, gzipped, inputs } = await measure();
  const nodeOnly = inputs.filter((p) => p.startsWith('node:'));
  console.log(
    `@floodgate/client ESM bundle: ${minified} B min, ${gzipped} B min+gzip (budget ${BUDGET_BYTES} B); ${inputs.length} modules`,
  );
  if (nodeOnly.length > 0) {
    console.error(`Node-only imports in the bundle: ${nodeOnly.join(', ')}`);
    process.exit(1);
  }
  if (gzipped > BUDGET_BYTES) {
    console.error(`over budget by ${gzipped - BUDGET_BYTES} B`);
    process.exit(1);
  }
}
