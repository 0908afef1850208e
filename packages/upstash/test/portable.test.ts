// The store claims every runtime with fetch (Workers, Deno, Bun, edge functions): nothing in its
// source may need Node.
import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { expect, it } from 'vitest';

it('imports no Node built-in and uses neither Buffer nor process', () => {
  const dir = new URL('../src/', import.meta.url);
  const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
  expect(files.length).toBeGreaterThan(0);
  for (const file of files) {
    // Code only: the TSDoc examples may show `process.env`.
    const src = readFileSync(new URL(file, dir), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    const imports = [...src.matchAll(/\b(?:from|import)\s*\(?\s*'([^']+)'/g)].map((m) => m[1]!);
    expect(imports.length, file).toBeGreaterThan(0);
    for (const spec of imports) {
      expect(spec.startsWith('node:') || builtinModules.includes(spec.split('/')[0]!), spec).toBe(
        false,
      );
    }
    expect(src, file).not.toMatch(/\bBuffer\.|\bprocess\./);
  }
});
