// Every ```ts / ```js block in README.md, packages/*/README.md and docs/*.md is type-checked
// against the built packages, so a renamed export or a changed option breaks CI, not a reader.
// A block that is deliberately partial is written ```ts fragment, or preceded by
// <!-- no-check -->; keep those rare. ```ts continued builds on the setup block before it, and
// a `<!-- prelude: … -->` line declares what a sample takes as given. Errors are reported as
// file:line of the Markdown.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join, relative } from 'node:path';
import { publishedPackages, root } from '../packaging/workspace.mjs';
import { apiReference } from './api-examples.mjs';
import { checkPictures } from './pictures.mjs';

const ts = createRequire(import.meta.url)('typescript');
const here = new URL('.', import.meta.url).pathname;
const failures = [];

const self = JSON.parse(readFileSync(join(here, 'package.json'), 'utf8'));
for (const { pkg } of publishedPackages()) {
  if (!self.devDependencies?.[pkg.name]) {
    failures.push(
      `${pkg.name} is published but not a devDependency of tests/docs: add "${pkg.name}": "workspace:*" so its samples resolve and turbo builds it first`,
    );
  }
}

/** The Markdown files whose samples are checked. */
function markdownFiles() {
  const files = [join(root, 'README.md')];
  for (const d of readdirSync(join(root, 'packages'))) {
    const f = join(root, 'packages', d, 'README.md');
    if (existsSync(f)) files.push(f);
  }
  for (const f of readdirSync(join(root, 'docs')))
    if (f.endsWith('.md')) files.push(join(root, 'docs', f));
  return files;
}

const LANGS = { ts: 'ts', typescript: 'ts', js: 'js', javascript: 'js', mjs: 'js' };

/**
 * The checkable blocks of one file: language, first code line (1-based), code, and the code it
 * builds on. A block tagged ```ts continued is checked after the file's last untagged checked
 * block (a setup the next few samples each build on); a `<!-- prelude: … -->` line right before a block
 * declares what the sample takes as given (`declare const app: Express;`) without showing it.
 */
export function extractBlocks(text) {
  const lines = text.split('\n');
  const blocks = [];
  let base;
  for (let i = 0; i < lines.length; i++) {
    const open = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)(.*)$/.exec(lines[i]);
    if (!open) continue;
    const [, indent, fence, lang, rest] = open;
    let end = i + 1;
    while (end < lines.length && !lines[end].trim().startsWith(fence)) end++;
    const prevIndex = lines.slice(0, i).findLastIndex((l) => l.trim() !== '');
    const prev = prevIndex === -1 ? '' : lines[prevIndex].trim();
    const skip = /\bfragment\b/.test(rest) || prev === '<!-- no-check -->';
    const kind = LANGS[lang.toLowerCase()];
    if (kind && !skip) {
      const code = lines
        .slice(i + 1, end)
        .map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l));
      /** Earlier code checked with this block, each part with the Markdown line it starts at. */
      let parts = [];
      const continued = /\bcontinued\b/.test(rest);
      if (continued && base !== undefined) parts = [...base.parts];
      const prelude = /^<!-- prelude: (.*) -->$/.exec(prev);
      if (prelude) parts.push({ line: prevIndex + 1, code: prelude[1] });
      parts.push({ line: i + 2, code: code.join('\n') });
      blocks.push({ kind, line: i + 2, parts });
      if (!continued) base = blocks.at(-1);
    }
    i = end;
  }
  return blocks;
}

const out = join(here, '.samples');
rmSync(out, { recursive: true, force: true });
mkdirSync(out);
const origin = new Map();
let count = 0;
const api = apiReference(extractBlocks);
failures.push(...api.failures);
const sources = markdownFiles().map((md) => ({
  md: relative(root, md),
  blocks: extractBlocks(readFileSync(md, 'utf8')),
}));
// An @example's lines are reported relative to the example itself.
for (const { name, ...block } of api.samples) sources.push({ md: name, blocks: [block] });
let fromApi = 0;
for (const { md, blocks } of sources) {
  for (const b of blocks) {
    if (md.endsWith('@example')) fromApi++;
    const name = join(out, `sample-${++count}.${b.kind === 'ts' ? 'mts' : 'mjs'}`);
    // `export {}` keeps each sample its own module, so two samples may both declare `limiter`.
    writeFileSync(name, `${b.parts.map((p) => p.code).join('\n')}\nexport {};\n`);
    // Sample line → Markdown line, part by part.
    let at = 0;
    const map = b.parts.map((p) => {
      const start = at;
      at += p.code.split('\n').length;
      return { start, line: p.line };
    });
    origin.set(name, { md, map });
  }
}

const program = ts.createProgram([...origin.keys()], {
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  target: ts.ScriptTarget.ES2022,
  lib: ['lib.es2023.d.ts', 'lib.dom.d.ts'],
  types: ['node'],
  typeRoots: [join(here, 'node_modules', '@types')],
  strict: true,
  noEmit: true,
  allowJs: true,
  checkJs: true,
  skipLibCheck: true,
});
for (const d of ts.getPreEmitDiagnostics(program)) {
  const message = ts.flattenDiagnosticMessageText(d.messageText, '\n');
  const src = d.file && origin.get(d.file.fileName);
  if (!src) {
    failures.push(`typescript: ${message}`);
    continue;
  }
  const { line, character } = d.file.getLineAndCharacterOfPosition(d.start ?? 0);
  const part = src.map.findLast((p) => p.start <= line) ?? src.map[0];
  failures.push(
    `${src.md}:${part.line + line - part.start}:${character + 1}: TS${d.code} ${message}`,
  );
}
if (!process.env.KEEP_DOCS_SAMPLES) rmSync(out, { recursive: true, force: true });
console.log(`docs samples: ${count} blocks type-checked (${fromApi} of them TSDoc @example)`);

failures.push(...(await checkPictures()));

if (failures.length) {
  console.error(`\n${failures.length} problem(s) in the docs:\n\n${failures.join('\n')}`);
  console.error(
    '\nMark a deliberately partial sample ```ts fragment (or precede it with <!-- no-check -->).',
  );
  process.exit(1);
}
console.log('docs ok');
