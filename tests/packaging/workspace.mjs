// Discovers the published packages from packages/*/package.json, so a package that lands later is
// covered without editing any list. Shared by the packaging test, the docs check and typedoc.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/** Every non-private package under packages/, with its folder and parsed package.json. */
export function publishedPackages() {
  const dir = join(root, 'packages');
  return readdirSync(dir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(dir, d.name, 'package.json')))
    .map((d) => {
      const path = join(dir, d.name);
      return { dir: path, pkg: JSON.parse(readFileSync(join(path, 'package.json'), 'utf8')) };
    })
    .filter(({ pkg }) => !pkg.private)
    .sort((a, b) => a.pkg.name.localeCompare(b.pkg.name));
}

/** The code subpaths of a package's "exports" ('.', './headers', …), without './package.json'. */
export function exportPaths(pkg) {
  if (typeof pkg.exports !== 'object' || pkg.exports === null) return ['.'];
  return Object.keys(pkg.exports).filter((k) => k !== './package.json');
}

/** Every file an exports entry points at (types and code, import and require conditions). */
export function exportTargets(entry) {
  if (typeof entry === 'string') return [entry];
  if (entry === null || typeof entry !== 'object') return [];
  return Object.values(entry).flatMap(exportTargets);
}

/** The bare specifier a consumer writes for an export path. */
export function specifier(pkg, path) {
  return path === '.' ? pkg.name : `${pkg.name}/${path.slice(2)}`;
}
