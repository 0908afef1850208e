// The API reference (typedoc) must build without a warning, and every top-level export of every
// published entry point must carry an `@example` with a ```ts block: those blocks join the
// Markdown samples and are type-checked the same way, so an example cannot drift from the API.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { root } from '../packaging/workspace.mjs';

/** The text of a typedoc comment part list. */
const text = (parts) => parts.map((p) => p.text).join('');

/** Every `@example` tag of a reflection: its own comment's, then its signatures'. */
function examplesOf(reflection) {
  const comments = [reflection.comment, ...(reflection.signatures ?? []).map((s) => s.comment)];
  return comments
    .flatMap((c) => c?.blockTags ?? [])
    .filter((t) => t.tag === '@example')
    .map((t) => text(t.content));
}

/**
 * Builds the reference once (HTML to a temporary folder, and JSON to read the examples).
 * `extractBlocks` is the Markdown sample extractor. Returns the problems found and the example
 * blocks, each named `<entry point> <export> @example`.
 */
export function apiReference(extractBlocks) {
  const out = mkdtempSync(join(tmpdir(), 'floodgate-api-'));
  const json = join(out, 'api.json');
  const r = spawnSync(
    join(root, 'node_modules', '.bin', 'typedoc'),
    ['--options', 'typedoc.config.mjs', '--out', join(out, 'html'), '--json', json],
    { cwd: root, encoding: 'utf8' },
  );
  if (r.status !== 0) {
    rmSync(out, { recursive: true, force: true });
    return { failures: [`pnpm docs:api fails:\n${r.stdout}${r.stderr}`], samples: [] };
  }
  const project = JSON.parse(readFileSync(json, 'utf8'));
  rmSync(out, { recursive: true, force: true });
  // A symbol re-exported by another entry point is a reference to its declaration.
  const byId = new Map();
  for (const module of project.children ?? []) {
    for (const reflection of module.children ?? []) byId.set(reflection.id, reflection);
  }
  const failures = [];
  const samples = [];
  // A declaration re-exported by several entry points is checked (and counted) once.
  const seen = new Set();
  let exports = 0;
  for (const module of project.children ?? []) {
    for (const child of module.children ?? []) {
      const reflection = child.variant === 'reference' ? byId.get(child.target) : child;
      const name = `${module.name} ${child.name}`;
      if (reflection === undefined) {
        failures.push(`${name}: re-exports a declaration the reference does not include`);
        continue;
      }
      const examples = examplesOf(reflection);
      exports++;
      if (examples.length === 0) {
        failures.push(`${name}: no @example in its TSDoc comment`);
        continue;
      }
      const signature = `${reflection.name}\n${examples.join('\n')}`;
      if (seen.has(signature)) continue;
      seen.add(signature);
      for (const example of examples) {
        const blocks = extractBlocks(example);
        const fenced = /^\s*(`{3,}|~{3,})/m.test(example);
        if (!fenced) failures.push(`${name}: @example has no fenced \`\`\`ts block`);
        for (const block of blocks) samples.push({ name: `${name} @example`, ...block });
      }
    }
  }
  console.log(
    `API reference (typedoc) builds without warnings; ${exports} exports, each with an @example`,
  );
  return { failures, samples };
}
