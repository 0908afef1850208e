// No Node built-in may be reachable from the entry points that claim every runtime: follow each
// built entry's relative imports through its chunks, and its imports of other @floodgate
// packages to their built entries, and refuse any import of a built-in.
import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { dirname, join, relative } from 'node:path';

const BUILTINS = new Set(builtinModules.filter((m) => !m.startsWith('_')));
const IMPORT = /\b(?:from|import|require)\s*\(?\s*["']([^"']+)["']/g;

/** The built files that must run anywhere, ESM and CJS. */
export const PORTABLE = [
  'packages/core/dist/index',
  'packages/core/dist/concurrency',
  'packages/core/dist/slices',
  'packages/core/dist/headers/index',
  'packages/memory/dist/index',
  'packages/client/dist/index',
  'packages/http/dist/fetch/index',
  'packages/http/dist/hono/index',
  // The edge stores: Workers, Deno and any fetch runtime.
  'packages/durable-objects/dist/index',
  'packages/deno-kv/dist/index',
  'packages/upstash/dist/index',
];

/** The built file `@floodgate/<name>[/<sub>]` resolves to in the workspace, for import or require. */
function workspaceEntry(root, spec, ext) {
  const [, name, sub] = /^@floodgate\/([\w-]+)(\/.*)?$/.exec(spec);
  const dir = join(root, 'packages', name);
  const { exports } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const target = exports?.[`.${sub ?? ''}`]?.[ext === '.js' ? 'import' : 'require']?.default;
  if (!target) throw new Error(`${spec}: no ${ext === '.js' ? 'import' : 'require'} export`);
  return join(dir, target);
}

/** Problems found: `file: imports X`. */
export function scanPortable(root) {
  const problems = [];
  for (const entry of PORTABLE) {
    for (const ext of ['.js', '.cjs']) {
      const seen = new Set();
      const queue = [join(root, entry + ext)];
      while (queue.length > 0) {
        const file = queue.pop();
        if (seen.has(file)) continue;
        seen.add(file);
        const src = readFileSync(file, 'utf8');
        for (const [, spec] of src.matchAll(IMPORT)) {
          if (spec.startsWith('.')) queue.push(join(dirname(file), spec));
          else if (spec.startsWith('@floodgate/')) queue.push(workspaceEntry(root, spec, ext));
          else if (spec.startsWith('node:') || BUILTINS.has(spec.split('/')[0])) {
            problems.push(`${relative(root, file)} (from ${entry}${ext}) imports ${spec}`);
          }
        }
        if (/\bBuffer\./.test(src)) problems.push(`${relative(root, file)} uses Node's Buffer`);
      }
    }
  }
  return problems;
}
