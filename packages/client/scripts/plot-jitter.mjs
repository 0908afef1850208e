// Writes docs/img/client-jitter.svg from a real run of the herd experiment (scripts/herd.mjs):
// 200 clients of the built package (dist/, so run `pnpm build` first) told "429, Retry-After: 2"
// in the same instant, once with the default jitter and once with jitter 'none'. The plot is a
// histogram of when their retries reached the server. Run: pnpm --filter @floodgate/client plot
import { mkdir, writeFile } from 'node:fs/promises';
import { availableParallelism, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { withRetry } from '../dist/index.js';
import { densest, histogram, runHerd } from './herd.mjs';

const OUT = fileURLToPath(new URL('../../../docs/img/client-jitter.svg', import.meta.url));
const CLIENTS = 200;
const FROM = 1800;
const TO = 3600;
const BIN = 50;

// The machine's state is part of the result: on a busy machine the no-jitter wave is wider.
const load = `${availableParallelism()} cores, load average ${loadavg()[0].toFixed(1)}`;
const runs = [];
for (const [label, options] of [
  ['default jitter (full, up to +1 s on a server delay)', {}],
  ["jitter: 'none'", { jitter: 'none' }],
]) {
  const { arrivals, waits } = await runHerd({ withRetry, clients: CLIENTS, options });
  runs.push({ label, arrivals, waits, bins: histogram(arrivals, FROM, TO, BIN) });
  console.log(
    `${label}: first ${arrivals[0].toFixed(0)} ms, last ${arrivals.at(-1).toFixed(0)} ms, ` +
      `most in any 100 ms: ${densest(arrivals, 100)}`,
  );
}

// The same 'none' run seen from the clients: when each one sent its retry, after its own 429.
// The spread in the panel above is this one process working through 200 requests.
const none = runs[1];
runs.push({
  label: "jitter: 'none', sends (ms after each client's own 429)",
  arrivals: none.waits,
  bins: histogram(none.waits, FROM, TO, BIN),
});
runs[1].label = "jitter: 'none' (arrivals at the server)";
runs[0].label = 'default jitter (arrivals at the server)';

const W = 760;
const PANEL_H = 210;
const M = { left: 56, right: 20, top: 78, bottom: 30 };
const plotW = W - M.left - M.right;
const H = M.top + runs.length * PANEL_H + M.bottom;
const maxCount = Math.max(...runs.flatMap((r) => r.bins));
const yMax = Math.ceil(maxCount / 20) * 20;
const x = (ms) => M.left + ((ms - FROM) / (TO - FROM)) * plotW;
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/'/g, '&#39;');

const parts = [
  `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12" role="img">`,
  `<title>Arrival times of ${CLIENTS} retries after one 429 instant, with and without jitter</title>`,
  `<rect width="${W}" height="${H}" fill="#fff"/>`,
  `<text x="${M.left}" y="22" font-size="15" font-weight="600">${CLIENTS} clients told "429, Retry-After: 2" at the same instant: </text>`,
  `<text x="${M.left}" y="40" font-size="15" font-weight="600">when did their retries reach the server?</text>`,
  `<text x="${M.left}" y="56" fill="#555">${BIN} ms bins; one real run: a node:http server, ${CLIENTS} clients of @floodgate/client (dist/); ${load}</text>`,
];
runs.forEach((run, i) => {
  const top = M.top + i * PANEL_H + 16;
  const h = PANEL_H - 60;
  const y = (n) => top + h - (n / yMax) * h;
  parts.push(
    `<text x="${M.left}" y="${top - 4}" font-weight="600">${esc(run.label)}: most in any 100 ms = ${densest(run.arrivals, 100)} of ${CLIENTS}</text>`,
  );
  for (let v = 0; v <= yMax; v += yMax / 4) {
    parts.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${y(v)}" y2="${y(v)}" stroke="#eee"/>`,
    );
    parts.push(`<text x="${M.left - 6}" y="${y(v) + 4}" text-anchor="end" fill="#555">${v}</text>`);
  }
  // Retry-After: the earliest a client may come back; the default jitter range after it.
  parts.push(
    `<rect x="${x(2000)}" y="${top}" width="${x(3000) - x(2000)}" height="${h}" fill="#2b6cb0" opacity="0.06"/>`,
  );
  parts.push(
    `<line x1="${x(2000)}" x2="${x(2000)}" y1="${top}" y2="${top + h}" stroke="#c53030" stroke-dasharray="4 3"/>`,
  );
  run.bins.forEach((n, b) => {
    if (n === 0) return;
    const bx = x(FROM + b * BIN);
    const bw = x(FROM + (b + 1) * BIN) - bx - 1;
    parts.push(
      `<rect x="${bx.toFixed(1)}" y="${y(n).toFixed(1)}" width="${bw.toFixed(1)}" height="${(top + h - y(n)).toFixed(1)}" fill="#2b6cb0"><title>${n}</title></rect>`,
    );
  });
  parts.push(
    `<line x1="${M.left}" x2="${W - M.right}" y1="${top + h}" y2="${top + h}" stroke="#333"/>`,
  );
  for (let t = FROM; t <= TO; t += 200) {
    parts.push(
      `<text x="${x(t)}" y="${top + h + 14}" text-anchor="middle" fill="#555">${t}</text>`,
    );
  }
});
parts.push(
  `<text x="${M.left + plotW / 2}" y="${H - 10}" text-anchor="middle" fill="#555">ms after the 429s; dashed red line: Retry-After (2000 ms); shaded: the default jitter range</text>`,
);
parts.push('</svg>');

await mkdir(fileURLToPath(new URL('../../../docs/img/', import.meta.url)), { recursive: true });
await writeFile(OUT, `${parts.join('\n')}\n`);
console.log(`wrote ${OUT}`);
