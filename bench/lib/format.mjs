// Formatting of figures and the one Markdown table the benchmark prints.

/** "68.2 µs", "12.3 ms", "1.52 s" from milliseconds. */
export function duration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  // Three significant digits; a value that rounds up to 1,000 moves to the next unit.
  const three = (x) => Number(x.toPrecision(3));
  if (three(ms * 1000) < 1000) return `${(ms * 1000).toPrecision(3)} µs`;
  if (three(ms) < 1000) return `${ms.toPrecision(3)} ms`;
  const s = ms / 1000;
  return s < 1000 ? `${s.toPrecision(3)} s` : `${Math.round(s)} s`;
}

/** "1,000" */
export function count(n) {
  return n.toLocaleString("en-US");
}

/** "1.24×" */
export function times(r) {
  if (r === null || r === undefined || !Number.isFinite(r)) return "–";
  return `${r < 0.1 ? r.toPrecision(2) : r.toFixed(2)}×`;
}

/** "123 MiB" from KiB ("12.3 MiB" with `digits` 1). */
export function mib(kib, digits = 0) {
  if (kib === null || kib === undefined || !Number.isFinite(kib) || kib <= 0) return "–";
  return `${(kib / 1024).toFixed(digits)} MiB`;
}

/** Text for a table cell: one line, pipes escaped. */
function cell(value) {
  return String(value ?? "")
    .replace(/\s*\n\s*/g, " ")
    .replace(/\|/g, "\\|");
}

/**
 * A Markdown table with padded columns. `rows` holds arrays of cells, or `{ section }` for a row that
 * names the group of the rows below it.
 */
export function renderTable(headers, rows) {
  const lines = rows.map((row) =>
    Array.isArray(row) ? row.map(cell) : [`**${cell(row.section)}**`, ...headers.slice(1).map(() => "")],
  );
  const widths = headers.map((header, i) => Math.max(header.length, ...lines.map((line) => line[i].length)));
  const format = (line) => `| ${line.map((text, i) => text.padEnd(widths[i])).join(" | ")} |`;
  return [format(headers), `|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`, ...lines.map(format)].join(
    "\n",
  );
}
