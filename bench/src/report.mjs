// results.json, the SVG chart and docs/benchmarks.md, from one run's measurements.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { median } from './measure.mjs';
import { slicesTarget } from './slices-report.mjs';

const root = new URL('../../', import.meta.url);

const summary = (samples) =>
  Object.fromEntries(
    [...samples].map(([name, runs]) => [
      name,
      { median: median(runs), runs: runs.map(Math.round) },
    ]),
  );

/** The plain-data form of every section (Maps become objects, medians computed). */
export function toJson(meta, r) {
  const perName = (m) => m && Object.fromEntries(m);
  const table = (rows) =>
    rows?.map((x) => ({
      ...x,
      samples: undefined,
      contenders: summary(x.samples),
      redisUs: perName(x.redisUs),
      redisCpuUs: perName(x.redisCpuUs),
    }));
  return {
    meta,
    inprocess: table(r.inprocess),
    hooks: table(r.hooks),
    redis: table(r.redis),
    roundtrips: r.roundtrips?.map((x) => ({
      ...x,
      client: Object.fromEntries(x.client),
      server: Object.fromEntries(x.server),
    })),
    memory: r.memory,
    ceiling: r.ceiling,
    blocked: table(r.blocked),
    accuracy: r.accuracy,
    eviction: r.eviction,
    concurrency: r.concurrency,
    overrides: r.overrides?.map((x) => ({
      scenario: x.scenario,
      contenders: summary(x.samples),
      redisUsPerDecision: x.redisUs && Object.fromEntries(x.redisUs),
    })),
    hot: r.hot && {
      inFlight: r.hot.inFlight,
      decisions: r.hot.decisions,
      runs: Object.fromEntries(r.hot.runs),
    },
    targets: r.targets,
  };
}

/** The targets, each as { what, value, target, higherIsBetter, met }. */
export function targets(r, { rlf, erl }) {
  const out = [];
  const ratio = (rows, scenario, a, b) => {
    const row = rows?.find((x) => x.scenario.startsWith(scenario));
    if (row === undefined) return undefined;
    return median(row.samples.get(a)) / median(row.samples.get(b));
  };
  const push = (what, value, target, higher = true) => {
    if (value === undefined || Number.isNaN(value)) return;
    out.push({
      what,
      value,
      target,
      higherIsBetter: higher,
      met: higher ? value >= target : value <= target,
    });
  };
  // In-process targets read the fresh-key rows (a new key string per decision under a prefix,
  // as an app builds it) over many keys; the pre-built rows are reported, not targeted.
  const fresh = r.inprocess?.find(
    (x) => x.keyStrings === 'fresh' && x.allowed && x.keyCount > 1 && x.shape === undefined,
  );
  // Issue 35: at least level with both peers, fresh keys, for every key shape.
  for (const row of r.inprocess?.filter((x) => x.shape !== undefined) ?? []) {
    push(
      `MemoryStore tokenBucket ÷ RateLimiterMemory (fresh keys, ${row.shape})`,
      ratio(r.inprocess, row.scenario, 'tokenBucket', rlf),
      1,
    );
    push(
      `MemoryStore fixedWindow ÷ express-rate-limit MemoryStore (fresh keys, ${row.shape})`,
      ratio(r.inprocess, row.scenario, 'fixedWindow', erl.memory),
      1,
    );
  }
  if (fresh !== undefined) {
    const n = fresh.keyCount.toLocaleString('en-US');
    push(
      `MemoryStore tokenBucket ÷ RateLimiterMemory (fresh keys, prefix, ${n} keys)`,
      ratio(r.inprocess, fresh.scenario, 'tokenBucket', rlf),
      1.5,
    );
    push(
      `MemoryStore fixedWindow ÷ express-rate-limit MemoryStore (fresh keys, prefix, ${n} keys)`,
      ratio(r.inprocess, fresh.scenario, 'fixedWindow', erl.memory),
      1.2,
    );
  }
  // Issue 35: one in flight against rate-limiter-flexible, 16 against rate-limit-redis, level or
  // better; 256 in flight keeps issue 10's target.
  for (const [scenario, peer, target] of [
    ['sequential (1 in flight)', rlf, 1],
    ['16 in flight', erl.redis, 1],
    ['256 in flight', rlf, 1.3],
  ]) {
    for (const p of ['tokenBucket', 'fixedWindow']) {
      push(`Redis ${p} ÷ ${peer}, ${scenario}`, ratio(r.redis, scenario, p, peer), target);
    }
  }
  // Issue 35: what Redis spends per decision at the most calls in flight (batched), level with
  // rate-limiter-flexible or better: usec of its scripts in INFO commandstats.
  const busiest = r.redis
    ?.filter((x) => x.redisUs !== undefined)
    .sort((a, b) => b.inFlight - a.inFlight)[0];
  for (const p of ['tokenBucket', 'fixedWindow', 'slidingWindow']) {
    const mine = busiest?.redisUs.get(p);
    const theirs = busiest?.redisUs.get(rlf);
    if (mine !== undefined && theirs !== undefined) {
      push(
        `Redis µs per decision, ${busiest.inFlight} in flight, ${p} ÷ RLF`,
        mine / theirs,
        1,
        false,
      );
    }
  }
  // Node CPU per lone decision against rate-limit-redis's, and Node ÷ the redis-benchmark
  // ceiling: retired by issue 35 (bench/doc/notes.md says why); the tables still show both.
  // Redis's µs per EVALSHA under redis-benchmark load (many samples), else the sequential run's.
  const us = (name) =>
    r.ceiling?.find((x) => x.name === name)?.usPerCall ??
    r.roundtrips?.find((x) => x.name === name)?.serverUs;
  // A lone call (one script run per decision): at most 1.5× rate-limiter-flexible's (issue 35).
  for (const [p, target] of [
    ['fixedWindow', 1.5],
    ['tokenBucket', 1.5],
    ['slidingWindow', 1.5],
  ]) {
    if (us(p) !== undefined)
      push(`Redis µs per lone decision, ${p} ÷ RLF`, us(p) / us(rlf), target, false);
  }
  // One hot identity, 256 in flight: Redis µs per decision against rate-limiter-flexible's.
  const hotUs = (name) => {
    const runs = r.hot?.runs.get(name);
    return runs === undefined ? undefined : median(runs.map((x) => x.usPerDecision));
  };
  for (const p of ['tokenBucket', 'fixedWindow']) {
    if (hotUs(p) !== undefined && hotUs(rlf) !== undefined)
      push(
        `Redis µs per decision, one hot identity, ${p} ÷ RLF`,
        hotUs(p) / hotUs(rlf),
        0.3,
        false,
      );
  }
  // Issue 16's moonshot, from this run's slices section or else the last one (its own run).
  const sliced = slicesTarget(r.slices ?? storedSlices());
  if (sliced !== undefined) out.push(sliced);
  const bytes = (name) => r.memory?.find((x) => x.name === name)?.memoryUsage;
  for (const p of ['tokenBucket', 'fixedWindow']) {
    if (bytes(p) !== undefined)
      push(`MEMORY USAGE bytes over RLF's, ${p}`, bytes(p) - bytes(rlf), 16, false);
  }
  return out;
}

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;');

/** Horizontal bars: each target's measured value against its target (a tick). */
export function chart(rows) {
  // Byte differences are no ratio; the slices ratio (tens of ×) would squash every other bar.
  const ratioRows = rows.filter((t) => !t.what.startsWith('MEMORY') && t.chart !== false);
  const w = 860;
  const left = 430;
  const barW = w - left - 40;
  const rowH = 24;
  const h = 50 + ratioRows.length * rowH;
  const max = Math.max(2, ...ratioRows.map((t) => Math.max(t.value, t.target))) * 1.05;
  const x = (v) => left + (v / max) * barW;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${w}" height="${h}" font-family="sans-serif" font-size="12">`,
    '<title>Floodgate against the issue 10 and 16 targets</title>',
    `<rect width="${w}" height="${h}" fill="#fff"/>`,
    `<text x="10" y="18" font-weight="bold">Issues 10 and 16 targets: measured ratio (bar) against its target (black tick); green = met</text>`,
    `<line x1="${x(1)}" y1="28" x2="${x(1)}" y2="${h - 8}" stroke="#999" stroke-dasharray="3,3"/>`,
    `<text x="${x(1) - 8}" y="${h - 2}" fill="#666">1×</text>`,
  ];
  ratioRows.forEach((t, i) => {
    const y = 34 + i * rowH;
    parts.push(
      `<text x="${left - 8}" y="${y + 13}" text-anchor="end">${esc(t.what)}</text>`,
      `<rect x="${left}" y="${y + 2}" width="${Math.max(1, x(t.value) - left)}" height="${rowH - 8}" fill="${t.met ? '#2e9d48' : '#d9822b'}"/>`,
      `<line x1="${x(t.target)}" y1="${y}" x2="${x(t.target)}" y2="${y + rowH - 4}" stroke="#000" stroke-width="2"/>`,
      `<text x="${Math.min(x(t.value), w - 40) + 4}" y="${y + 13}">${t.value.toFixed(2)}</text>`,
    );
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

function formatJson(url) {
  try {
    // In the repository's own format, so `pnpm lint` stays clean after a run.
    execFileSync('pnpm', ['exec', 'biome', 'format', '--write', fileURLToPath(url)], {
      cwd: fileURLToPath(root),
      stdio: 'ignore',
    });
  } catch {
    // Without Biome (a bare checkout) the file is still valid JSON.
  }
}

/** Writes bench/results.json, docs/benchmarks.svg and docs/benchmarks.md. */
export function writeReport(json, markdownBody) {
  const results = new URL('bench/results.json', root);
  writeFileSync(results, `${JSON.stringify(json, null, 2)}\n`);
  formatJson(results);
  writeFileSync(new URL('docs/benchmarks.svg', root), chart(json.targets));
  const header = readFileSync(new URL('bench/doc/header.md', root), 'utf8');
  const notes = readFileSync(new URL('bench/doc/notes.md', root), 'utf8');
  // The slices and GLIDE sections come from their own runs (BENCH_SECTIONS=slices; bench:glide,
  // which needs a Valkey server): kept.
  const kept = [SLICES, GLIDE]
    .filter((x) => existsSync(x.md))
    .map((x) => `${readFileSync(x.md, 'utf8').trim()}\n\n`)
    .join('');
  const doc = `${header.trimEnd()}\n\n## Results (generated by the bench run below)\n\n![Floodgate against its targets](benchmarks.svg)\n\n${markdownBody.trim()}\n\n${kept}${notes.trim()}\n`;
  writeFileSync(new URL('docs/benchmarks.md', root), doc);
}

const GLIDE = {
  json: new URL('bench/results-glide.json', root),
  md: new URL('bench/doc/glide.md', root),
  begin: '<!-- glide: written by `pnpm --filter @floodgate/bench bench:glide` -->',
  end: '<!-- /glide -->',
};
const SLICES = {
  json: new URL('bench/results-slices.json', root),
  md: new URL('bench/doc/slices.md', root),
  begin: '<!-- slices: written by `BENCH_SECTIONS=slices pnpm --filter @floodgate/bench bench` -->',
  end: '<!-- /slices -->',
};

/**
 * Writes a separate run's JSON and Markdown (bench/doc/<name>.md), and puts the section into
 * docs/benchmarks.md in place (else before `before`'s section, else before the notes), leaving
 * every other section's numbers as their last runs wrote them.
 */
function writeSeparate(spec, json, markdownBody, before) {
  writeFileSync(spec.json, `${JSON.stringify(json, null, 2)}\n`);
  formatJson(spec.json);
  const section = `${spec.begin}\n${markdownBody.trim()}\n${spec.end}\n`;
  writeFileSync(spec.md, section);
  const docUrl = new URL('docs/benchmarks.md', root);
  const doc = readFileSync(docUrl, 'utf8');
  const notes = readFileSync(new URL('bench/doc/notes.md', root), 'utf8').trim();
  const begin = doc.indexOf(spec.begin);
  const end = doc.indexOf(spec.end);
  let next;
  if (begin >= 0 && end > begin) {
    next = `${doc.slice(0, begin)}${section.trimEnd()}${doc.slice(end + spec.end.length)}`;
  } else {
    let at = before === undefined ? -1 : doc.indexOf(before.begin);
    if (at < 0) at = doc.indexOf(notes);
    if (at < 0) throw new Error('docs/benchmarks.md: the notes section was not found');
    next = `${doc.slice(0, at)}${section}\n${doc.slice(at)}`;
  }
  writeFileSync(docUrl, next);
}

/** bench/results-glide.json, bench/doc/glide.md and that section of docs/benchmarks.md. */
export function writeGlideReport(json, markdownBody) {
  writeSeparate(GLIDE, json, markdownBody);
}

/**
 * bench/results-slices.json, bench/doc/slices.md and that section of docs/benchmarks.md (before
 * the GLIDE one), and the slices row of the targets table there, replaced or added.
 */
export function writeSlicesReport(json, markdownBody, target) {
  writeSeparate(SLICES, json, markdownBody, GLIDE);
  const docUrl = new URL('docs/benchmarks.md', root);
  const lines = readFileSync(docUrl, 'utf8').split('\n');
  const row = `| ${target.what} | ${target.value.toFixed(2)} | ≥ ${target.target} | ${target.met ? 'yes' : '**no**'} |`;
  const head = lines.findIndex((l) => l.startsWith('### Targets'));
  if (head < 0) return;
  const old = lines.findIndex((l, i) => i > head && l.startsWith(`| ${target.what.split(':')[0]}`));
  if (old >= 0) lines[old] = row;
  else {
    let last = head + 1;
    while (last + 1 < lines.length && (lines[last + 1].startsWith('|') || lines[last] === ''))
      last++;
    lines.splice(last + 1, 0, row);
  }
  writeFileSync(docUrl, lines.join('\n'));
}

/** The stored result of the last slices run, for the targets table of a full run. */
export function storedSlices() {
  try {
    return JSON.parse(readFileSync(SLICES.json, 'utf8')).slices;
  } catch {
    return undefined;
  }
}
