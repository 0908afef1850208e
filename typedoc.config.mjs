// The API reference: one page set for every published package, built by `pnpm docs:api` into
// docs/api (generated, not committed). Entry points come from each package's "exports", so a new
// package is documented without editing this file. Cross-package imports are mapped to the
// sources, so a type from @floodgate/core used by a store links to core's page, not to a .d.ts.
import { exportPaths, publishedPackages, specifier } from './tests/packaging/workspace.mjs';

const entryPoints = [];
const paths = {};
for (const { dir, pkg } of publishedPackages()) {
  for (const path of exportPaths(pkg)) {
    const types = pkg.exports?.[path]?.import?.types ?? pkg.types;
    // dist/headers/index.d.ts is built from src/headers/index.ts (tsup entries mirror src/).
    const source = `${dir}/${types.replace(/^\.\/dist\//, 'src/').replace(/\.d\.c?ts$/, '.ts')}`;
    entryPoints.push(source);
    paths[specifier(pkg, path)] = [source];
  }
}

/** @type {Partial<import('typedoc').TypeDocOptions>} */
export default {
  name: 'Floodgate',
  entryPoints,
  entryPointStrategy: 'resolve',
  tsconfig: './tsconfig.typedoc.json',
  displayBasePath: '.',
  plugin: ['./scripts/typedoc-module-names.mjs'],
  compilerOptions: { paths },
  out: 'docs/api',
  readme: 'none',
  // No "defined in" links: they need a git remote, and CI's fresh clone may have none that
  // typedoc can read (a warning, which is an error here).
  disableSources: true,
  excludePrivate: true,
  excludeInternal: true,
  treatWarningsAsErrors: true,
  validation: { notExported: true, invalidLink: true, notDocumented: true },
};
