// The samples a reader copies are the code the runtimes run: blocks tagged ```ts runtime=… in
// docs/getting-started.md, taken verbatim. The one Hono sample names, in a comment, the module
// each runtime takes `getConnInfo` from; that swap is the only edit made. Deno runs a sample with
// the permission flags of the `deno serve … app.ts` command the text before it gives.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const HONO_CONN_INFO = { bun: 'hono/bun', deno: 'hono/deno', workerd: 'hono/cloudflare-workers' };

/** `[{ runtime, name, code, flags? }]`: one entry per runtime a sample claims. */
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
      const name = `${adapter} sample (getting-started.md:${i + 1}) on ${runtime}`;
      out.push({
        runtime,
        name,
        code: adapter === 'hono' ? forRuntime(code, runtime) : code,
        ...(runtime === 'deno' ? { flags: denoFlags(lines, i, name) } : {}),
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

/** The flags of the last `deno serve … app.ts` in the text between the previous block and this. */
function denoFlags(lines, open, name) {
  let start = open;
  while (start > 0 && !lines[start - 1].startsWith('```')) start--;
  const text = lines.slice(start, open).join(' ');
  const command = [...text.matchAll(/`deno serve ([^`]*?)\s*app\.ts`/g)].at(-1);
  if (!command) throw new Error(`${name}: no \`deno serve … app.ts\` command before it`);
  return command[1].split(/\s+/).filter(Boolean);
}
