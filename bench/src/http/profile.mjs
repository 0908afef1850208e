// Reads a .cpuprofile (node --cpu-prof) and lists where the time went: self time by function,
// and self time grouped by package, so a profile can be read without a browser.
// Run: node bench/src/http/profile.mjs <file.cpuprofile> [top]
import { readFileSync } from 'node:fs';

/** Self time per function (ms) and per package, from a V8 CPU profile. */
export function summarize(profile) {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map();
  const deltas = profile.timeDeltas;
  for (let i = 0; i < profile.samples.length; i++) {
    const id = profile.samples[i];
    self.set(id, (self.get(id) ?? 0) + (deltas[i] ?? 0));
  }
  const fns = new Map();
  const pkgs = new Map();
  let total = 0;
  for (const [id, us] of self) {
    const { functionName, url, lineNumber } = byId.get(id).callFrame;
    total += us;
    const where = url.replace(/^file:\/\//, '').replace(/.*node_modules\//, '');
    const name = `${functionName || '(anonymous)'} ${where.split('/').slice(-2).join('/')}:${lineNumber + 1}`;
    fns.set(name, (fns.get(name) ?? 0) + us);
    const pkg = packageOf(url, functionName);
    pkgs.set(pkg, (pkgs.get(pkg) ?? 0) + us);
  }
  const sorted = (m) => [...m].sort((a, b) => b[1] - a[1]).map(([k, us]) => [k, us / 1000]);
  return { totalMs: total / 1000, functions: sorted(fns), packages: sorted(pkgs) };
}

function packageOf(url, functionName) {
  if (url === '') return functionName.startsWith('(') ? functionName : '(native)';
  if (url.startsWith('node:')) return 'node core';
  const scoped = /node_modules\/(?:\.pnpm\/[^/]+\/node_modules\/)?(@[^/]+\/[^/]+|[^/]+)/.exec(url);
  if (scoped) return scoped[1];
  const ws = /packages\/([^/]+)\//.exec(url);
  return ws ? `@floodgate/${ws[1]}` : url.split('/').slice(-2).join('/');
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop())) {
  const top = Number(process.argv[3] ?? 25);
  const s = summarize(JSON.parse(readFileSync(process.argv[2], 'utf8')));
  const pct = (ms) => `${((ms / s.totalMs) * 100).toFixed(1).padStart(5)} %`;
  console.log(`total ${s.totalMs.toFixed(0)} ms\n\nby package:`);
  for (const [k, ms] of s.packages.slice(0, 15)) console.log(`${pct(ms)}  ${k}`);
  console.log('\nby function (self):');
  for (const [k, ms] of s.functions.slice(0, top)) console.log(`${pct(ms)}  ${k}`);
}
