// The samples a reader copies are the code the runtimes run: blocks tagged ```ts runtime=… in
// docs/getting-started.md, taken verbatim. The one Hono sample names, in a comment, the module
// each runtime takes `getConnInfo` from; that swap is the only edit made.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const HONO_CONN_INFO = { bun: 'hono/bun', deno: 'hono/deno', workerd: 'hono/cloudflare-workers' };

/** `[{ runtime, name, line, code }]`: one entry per runtime a sample claims. */
export function runtimeSamples(root) {
  const file = join(root, 'docs', 'getting-started.md');
  const lines = readFileSync(file, 'utf8').split('\n');
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```ts\s.*\bruntime=([\w,]+)/.exec(lines[i]);
    if (!open) continue;
    let end = i + 1;
    while (end < lines.length && lines[end] !== '```') end++;
    const code = lines.slice(i + 1, end).join('\n');
    const adapter = /@floodgate\/http\/(\w+)/.exec(code)?.[1] ?? 'unknown';
    for (const runtime of open[1].split(',')) {
      out.push({
        runtime,
        name: `${adapter} sample (getting-started.md:${i + 1}) on ${runtime}`,
        code: adapter === 'hono' ? forRuntime(code, runtime) : code,
      });
    }
    i = end;
  }
  return out;
}

function forRuntime(code, runtime) {
  const want = HONO_CONN_INFO[runtime];
  if (!want) throw new Error(`no getConnInfo module known for ${runtime}`);
  const swapped = code.replace(/from 'hono\/bun'/, `from '${want}'`);
  if (!swapped.includes(`from '${want}'`))
    throw new Error("the Hono sample no longer imports 'hono/bun'");
  return swapped;
}
