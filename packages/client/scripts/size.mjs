// The size budgets and the "no Node-only imports" check, run by `pnpm lint` after the build.
// Bundles dist/index.js the way a browser app would (all dependencies in, platform 'browser',
// minified) and gzips it. A `node:` import, or any Node built-in, fails the bundle itself:
// esbuild cannot resolve them for the browser platform.
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';

/** The budget stated in README.md ("Size"): the main entry, all it pulls in. */
export const BUDGET_BYTES = 8192;
/**
 * The model-apis subpath's own budget: what an app that imports the main entry pays on top of it
 * for `@floodgate/client/model-apis` (the code they share is counted once, as a bundler does).
 */
export const MODEL_APIS_BUDGET_BYTES = 2560;

const dist = (file) => fileURLToPath(new URL(`../dist/${file}`, import.meta.url));

/** One browser bundle of `files` (their exports, all they import), minified, gzipped. */
async function bundle(files) {
  const result = await build({
    stdin: {
      contents: files.map((f) => `export * from ${JSON.stringify(dist(f))};`).join('\n'),
      resolveDir: fileURLToPath(new URL('..', import.meta.url)),
      loader: 'js',
    },
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

/** The main entry's bundle. */
export function measure() {
  return bundle(['index.js']);
}

/** The model-apis subpath: alone, and what it adds to an app that has the main entry. */
export async function measureModelApis() {
  const main = await measure();
  const alone = await bundle(['model-apis/index.js']);
  const both = await bundle(['index.js', 'model-apis/index.js']);
  return { alone, both, addedGzipped: both.gzipped - main.gzipped };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const { minified, gzipped, inputs } = await measure();
  const models = await measureModelApis();
  const nodeOnly = [...inputs, ...models.both.inputs].filter((p) => p.startsWith('node:'));
  console.log(
    `@floodgate/client ESM bundle: ${minified} B min, ${gzipped} B min+gzip (budget ${BUDGET_BYTES} B); ${inputs.length} modules`,
  );
  console.log(
    `@floodgate/client/model-apis: +${models.addedGzipped} B min+gzip on top of it (budget ${MODEL_APIS_BUDGET_BYTES} B); ${models.alone.gzipped} B alone`,
  );
  if (nodeOnly.length > 0) {
    console.error(`Node-only imports in the bundle: ${nodeOnly.join(', ')}`);
    process.exit(1);
  }
  if (gzipped > BUDGET_BYTES) {
    console.error(`over budget by ${gzipped - BUDGET_BYTES} B`);
    process.exit(1);
  }
  if (models.addedGzipped > MODEL_APIS_BUDGET_BYTES) {
    console.error(`model-apis over budget by ${models.addedGzipped - MODEL_APIS_BUDGET_BYTES} B`);
    process.exit(1);
  }
}
