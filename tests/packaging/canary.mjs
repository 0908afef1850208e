// The checks must bite: a tarball whose CommonJS entry is missing (fixtures/broken: `exports`
// points at dist/index.cjs, which `files` leaves out) is packed and checked the way every
// published package is. If publint or attw passed it, the packaging test would pass broken
// packages too, so that is a failure of this test.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Resolves with a failure message, or undefined when every check rejected the broken tarball. */
export async function brokenTarballIsCaught(bin) {
  const dir = new URL('./fixtures/broken/', import.meta.url).pathname;
  const out = mkdtempSync(join(tmpdir(), 'floodgate-canary-'));
  try {
    await run('npm', ['pack', '--pack-destination', out], { cwd: dir });
    const tgz = join(
      out,
      readdirSync(out).find((f) => f.endsWith('.tgz')),
    );
    const passed = [];
    for (const [name, cmd, args] of [
      ['publint --strict', bin('publint'), ['run', '--strict', dir]],
      ['attw', bin('attw'), [tgz, '--format', 'table-flipped']],
    ]) {
      try {
        await run(cmd, args, { cwd: dir, env: { ...process.env, FORCE_COLOR: '0' } });
        passed.push(name);
      } catch {
        // Rejected, as it must be.
      }
    }
    return passed.length === 0
      ? undefined
      : `the broken fixture tarball passed ${passed.join(' and ')}: the packaging checks would pass a broken package`;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
