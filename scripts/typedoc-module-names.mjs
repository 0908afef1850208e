// A local typedoc plugin: names each entry module by the specifier users import
// ('@floodgate/core/headers') instead of its source path ('packages/core/src/headers').
import { relative } from 'node:path';
import { Converter } from 'typedoc';
import { exportPaths, publishedPackages, root, specifier } from '../tests/packaging/workspace.mjs';

/** Source path (relative to the root, no extension, no /index) → import specifier. */
export function moduleNames() {
  const names = new Map();
  for (const { dir, pkg } of publishedPackages()) {
    for (const path of exportPaths(pkg)) {
      const types = pkg.exports?.[path]?.import?.types ?? pkg.types;
      const source = `${relative(root, dir)}/${types.replace(/^\.\/dist\//, 'src/')}`;
      names.set(source.replace(/(\/index)?\.d\.c?ts$/, ''), specifier(pkg, path));
    }
  }
  return names;
}

/** @param {import('typedoc').Application} app */
export function load(app) {
  const names = moduleNames();
  app.converter.on(Converter.EVENT_RESOLVE_BEGIN, (context) => {
    for (const mod of context.project.children ?? []) {
      const name = names.get(mod.name);
      if (name) mod.name = name;
    }
  });
}
