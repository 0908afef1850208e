// A line chart as a hand-built SVG string. Numbers are rounded to one decimal so the output is
// the same bytes on every machine.

const W = 640;
const H = 320;
const M = { left: 56, right: 16, top: 36, bottom: 64 };
const f = (n) => (Math.round(n * 10) / 10).toString();
const esc = (s) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A step chart: each series holds [x, y] points, drawn as a staircase. */
export function chart({ title, xLabel, yLabel, xMax, yMax, series, vlines = [], hlines = [] }) {
  const pw = W - M.left - M.right;
  const ph = H - M.top - M.bottom;
  const X = (x) => M.left + (x / xMax) * pw;
  const Y = (y) => M.top + ph - (y / yMax) * ph;
  const parts = [];
  parts.push(
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="system-ui, sans-serif" font-size="12" role="img">`,
  );
  parts.push(`<title>${esc(title)}</title>`);
  parts.push(`<rect width="${W}" height="${H}" fill="#ffffff"/>`);
  parts.push(`<text x="${W / 2}" y="20" text-anchor="middle" font-size="14">${esc(title)}</text>`);
  for (const t of ticks(yMax)) {
    parts.push(
      `<line x1="${M.left}" x2="${M.left + pw}" y1="${f(Y(t))}" y2="${f(Y(t))}" stroke="#eeeeee"/>`,
    );
    parts.push(
      `<text x="${M.left - 6}" y="${f(Y(t) + 4)}" text-anchor="end" fill="#555555">${t}</text>`,
    );
  }
  for (const t of ticks(xMax)) {
    parts.push(
      `<text x="${f(X(t))}" y="${M.top + ph + 16}" text-anchor="middle" fill="#555555">${t}</text>`,
    );
  }
  parts.push(
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${M.top + ph}" stroke="#333333"/>`,
  );
  parts.push(
    `<line x1="${M.left}" x2="${M.left + pw}" y1="${M.top + ph}" y2="${M.top + ph}" stroke="#333333"/>`,
  );
  parts.push(
    `<text x="${M.left + pw / 2}" y="${M.top + ph + 34}" text-anchor="middle">${esc(xLabel)}</text>`,
  );
  parts.push(
    `<text transform="translate(16 ${M.top + ph / 2}) rotate(-90)" text-anchor="middle">${esc(yLabel)}</text>`,
  );
  for (const v of vlines) {
    parts.push(
      `<line x1="${f(X(v.x))}" x2="${f(X(v.x))}" y1="${M.top}" y2="${M.top + ph}" stroke="#f29900" stroke-dasharray="4 3"/>`,
    );
    parts.push(
      `<text x="${f(X(v.x) + 4)}" y="${M.top + 12}" fill="#b06000">${esc(v.label)}</text>`,
    );
  }
  for (const h of hlines) {
    parts.push(
      `<line x1="${M.left}" x2="${M.left + pw}" y1="${f(Y(h.y))}" y2="${f(Y(h.y))}" stroke="#188038" stroke-dasharray="6 3"/>`,
    );
    parts.push(
      `<text x="${M.left + pw - 4}" y="${f(Y(h.y) - 4)}" text-anchor="end" fill="#188038">${esc(h.label)}</text>`,
    );
  }
  for (const s of series) {
    let d = '';
    let prev = null;
    for (const [x, y] of s.points) {
      d += prev === null ? `M${f(X(x))} ${f(Y(y))}` : ` H${f(X(x))} V${f(Y(y))}`;
      prev = y;
    }
    const dash = s.dash ? ' stroke-dasharray="3 3"' : '';
    parts.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="2"${dash}/>`);
  }
  series.forEach((s, i) => {
    const x = M.left + i * 220;
    const y = H - 12;
    const dash = s.dash ? ' stroke-dasharray="3 3"' : '';
    parts.push(
      `<line x1="${x}" x2="${x + 24}" y1="${y - 4}" y2="${y - 4}" stroke="${s.color}" stroke-width="2"${dash}/>`,
    );
    parts.push(`<text x="${x + 30}" y="${y}">${esc(s.name)}</text>`);
  });
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}

/** Round tick values: about five per axis. */
function ticks(max) {
  const raw = max / 5;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw);
  const out = [];
  for (let t = 0; t <= max; t += step) out.push(t);
  return out;
}
