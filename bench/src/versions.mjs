// What a report's header says of the run: the machine, and the installed version of a package.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { arch, cpus, loadavg, platform } from 'node:os';
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

/** The machine a run was measured on, as every section's header records it. */
export function machine() {
  return {
    date: new Date().toISOString(),
    node: process.version,
    platform: `${platform()} ${arch()}`,
    cpus: cpus().length,
    cpuModel: cpus()[0]?.model.trim() ?? '?',
    loadAverageAtStart: loadavg().map((l) => Number(l.toFixed(2))),
  };
}
