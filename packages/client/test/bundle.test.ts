import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script, also run by `pnpm lint`.
import * as size from '../scripts/size.mjs';

const { BUDGET_BYTES, MODEL_APIS_BUDGET_BYTES, measure, measureModelApis } = size;

/** The packages a built file imports, itself or through this package's own chunks. */
async function imports(file: string, seen = new Set<string>()): Promise<Set<string>> {
  const url = new URL(`../dist/${file}`, import.meta.url);
  const code = await readFile(url, 'utf8');
  const specifiers = [...code.matchAll(/^} from "([^"]+)";$|^import .* from "([^"]+)";$/gm)].map(
    (m) => (m[1] ?? m[2]) as string,
  );
  const out = new Set<string>();
  for (const s of specifiers) {
    if (!s.startsWith('.')) {
      out.add(s);
      continue;
    }
    const chunk = new URL(s, url).pathname.split('/dist/')[1] as string;
    if (seen.has(chunk)) continue;
    seen.add(chunk);
    for (const inner of await imports(chunk, seen)) out.add(inner);
  }
  return out;
}

describe('the ESM bundle', () => {
  it('bundles for the browser platform with its dependencies, within the size budget', async () => {
    // esbuild cannot resolve a Node built-in for the browser platform: measure() would throw.
    const { gzipped, inputs } = await measure();
    expect(inputs.filter((p: string) => p.startsWith('node:'))).toEqual([]);
    expect(inputs.some((p: string) => p.includes('core/dist/headers'))).toBe(true);
    expect(inputs.some((p: string) => /core\/dist\/index\.js$/.test(p))).toBe(false);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('imports nothing but core’s headers subpath (itself or through its chunk)', async () => {
    expect(await imports('index.js')).toEqual(new Set(['@floodgate/core/headers']));
  });

  it('carries none of the model-apis code, in its chunk either', async () => {
    const dist = new URL('../dist/', import.meta.url);
    const files = (await readdir(dist)).filter((f) => /^(index|chunk-\w+)\.js$/.test(f));
    expect(files.length).toBeGreaterThan(1);
    for (const f of files) {
      const code = await readFile(new URL(f, dist), 'utf8');
      expect(code, f).not.toMatch(/anthropic|retry-after-ms|x-ratelimit-reset-|max_tokens/);
    }
  });
});

describe('the model-apis subpath', () => {
  it('adds at most its own budget to an app that has the main entry, and no Node import', async () => {
    const { both, addedGzipped } = await measureModelApis();
    expect(both.inputs.filter((p: string) => p.startsWith('node:'))).toEqual([]);
    expect(addedGzipped).toBeLessThanOrEqual(MODEL_APIS_BUDGET_BYTES);
  });

  it('imports nothing but core’s headers subpath either, and not the main entry', async () => {
    expect(await imports('model-apis/index.js')).toEqual(new Set(['@floodgate/core/headers']));
    const code = await readFile(new URL('../dist/model-apis/index.js', import.meta.url), 'utf8');
    expect(code).not.toMatch(/from "\.\.\/index\.js"/);
  });
});
