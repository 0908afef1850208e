// Plain-text tables: the demo's output is pasted into docs/demo.md, so no colours or box glyphs.

/**
 * @param {string[]} head
 * @param {Array<Array<string | number>>} rows
 * @param {{ footer?: Array<string | number> }} [options]
 */
export function table(head, rows, options = {}) {
  const all = [head, ...rows, ...(options.footer ? [options.footer] : [])].map((r) =>
    r.map(String),
  );
  const widths = head.map((_, c) => Math.max(...all.map((r) => (r[c] ?? '').length)));
  const numeric = head.map((_, c) => rows.every((r) => typeof r[c] === 'number'));
  const line = (r) =>
    `  ${r.map((cell, c) => (numeric[c] ? cell.padStart(widths[c]) : cell.padEnd(widths[c]))).join('   ')}`.trimEnd();
  const rule = `  ${widths.map((w) => '-'.repeat(w)).join('   ')}`;
  const out = [line(all[0]), rule, ...all.slice(1, 1 + rows.length).map(line)];
  if (options.footer) out.push(rule, line(all[all.length - 1]));
  return out.join('\n');
}
