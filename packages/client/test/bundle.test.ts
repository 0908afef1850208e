import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ESM script, also run by `pnpm lint`.
import { BUDGET_BYTES, measure } from '../scripts/size.mjs';

describe('the ESM bundle', () => {
  it('bundles for the browser platform with its dependencies, within the size budget', async () => {
    // esbuild cannot resolve a Node built-in for the browser platform: measure() would throw.
    const { gzipped, inputs } = await measure();
    expect(inputs.filter((p: string) => p.startsWith('node:'))).toEqual([]);
    expect(inputs.some((p: string) => p.includes('core/dist/headers'))).toBe(true);
    expect(inputs.some((p: string) => /core\/dist\/index\.js$/.test(p))).toBe(false);
    expect(gzipped).toBeLessThanOrEqual(BUDGET_BYTES);
  });

  it('imports nothing but core’s headers subpath', async () => {
    const code = await readFile(new URL('../dist/index.js', import.meta.url), 'utf8');
    const specifiers = [...code.matchAll(/^import .* from "([^"]+)";$/gm)].map((m) => m[1]);
    expect(new Set(specifiers)).toEqual(new Set(['@floodgate/core/headers']));
  });
});
