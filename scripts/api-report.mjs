#!/usr/bin/env node
// The public API of every published package, one report per `exports` path, checked in under
// packages/<pkg>/etc/. `pnpm lint` runs this in check mode: a change to a public name, signature
// or type then fails lint until the report is rewritten (`pnpm api:report`) and committed, so it
// shows up in review beside its changeset. Reads the built declarations: run after `pnpm build`.
//
// One script instead of one api-extractor.json per entry point: the entry points are read from
// each package.json, so a new subpath is covered without anyone remembering to add a config.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const write = process.argv.includes('--write');
const root = resolve(import.meta.dirname, '..');
const temp = mkdtempSync(join(tmpdir(), 'floodgate-api-'));
const failures = [];

// Messages that are about TSDoc style rather than the surface; the reports are for review of
// names and types, and typedoc (tests/docs) already holds the doc comments to their standard.
// 'ae-missing-release-tag' is not among them: every export says `@public`, `@beta` or
// `@internal` (docs/versioning.md), so a new name without one fails lint.
const quiet = [
  'ae-forgotten-export',
  'ae-internal-missing-underscore',
  'ae-unresolved-link',
  'ae-undocumented',
];

for (const dir of readdirSync(join(root, 'packages'))) {
  const pkgDir = join(root, 'packages', dir);
  const manifest = join(pkgDir, 'package.json');
  if (!existsSync(manifest)) continue;
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  if (pkg.private) continue;
  for (const [subpath, target] of Object.entries(pkg.exports ?? {})) {
    const types = target?.import?.types;
    if (typeof types !== 'string') continue;
    const entry = join(pkgDir, types);
    if (!existsSync(entry)) {
      failures.push(`${pkg.name}${subpath.slice(1)}: ${types} is missing; run pnpm build first`);
      continue;
    }
    if (write) mkdirSync(join(pkgDir, 'etc'), { recursive: true });
    const name = subpath === '.' ? dir : `${dir}.${subpath.slice(2).replaceAll('/', '-')}`;
    const config = ExtractorConfig.prepare({
      configObject: {
        projectFolder: pkgDir,
        mainEntryPointFilePath: entry,
        compiler: {
          overrideTsconfig: {
            compilerOptions: {
              target: 'es2022',
              module: 'esnext',
              moduleResolution: 'bundler',
              strict: true,
              skipLibCheck: true,
              types: ['node'],
            },
            files: [entry],
          },
        },
        apiReport: {
          enabled: true,
          reportFileName: name,
          reportFolder: join(pkgDir, 'etc'),
          reportTempFolder: temp,
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          extractorMessageReporting: Object.fromEntries([
            ['default', { logLevel: 'warning' }],
            ...quiet.map((id) => [id, { logLevel: 'none' }]),
          ]),
          tsdocMessageReporting: { default: { logLevel: 'none' } },
          compilerMessageReporting: { default: { logLevel: 'warning' } },
        },
      },
      configObjectFullPath: undefined,
      packageJsonFullPath: manifest,
    });
    const result = Extractor.invoke(config, {
      localBuild: write,
      showVerboseMessages: false,
      messageCallback: (message) => {
        // Keep the run readable: only what is about the surface reaches the log.
        if (message.logLevel === 'none') message.handled = true;
      },
    });
    if (!result.succeeded || result.apiReportChanged) {
      failures.push(
        `${pkg.name}${subpath.slice(1)}: ${
          result.apiReportChanged
            ? `the public API differs from packages/${dir}/etc/${name}.api.md`
            : `api-extractor failed (${result.errorCount} errors, ${result.warningCount} warnings, above)`
        }`,
      );
    }
  }
}
rmSync(temp, { recursive: true, force: true });

if (failures.length > 0 && !write) {
  console.error(`API reports out of date:\n- ${failures.join('\n- ')}`);
  console.error(
    'Review the change, then run `pnpm api:report` and commit the reports with a changeset.',
  );
  process.exit(1);
}
if (failures.some((f) => !f.includes('differs'))) {
  console.error(failures.join('\n'));
  process.exit(1);
}
console.log(write ? 'API reports written' : 'API reports match the code');
