// The installed version of a package, for the report's header.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** Some packages do not export ./package.json: find it next to the resolved entry point. */
export function version(name) {
  let dir = dirname(require.resolve(name));
  for (;;) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (pkg.name === name) return pkg.version;
    } catch {}
    const up = dirname(dir);
    if (up === dir) return '?';
    dir = up;
  }
}
