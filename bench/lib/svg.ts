// Hand-written SVG charts for docs/: horizontal bars with min–max whiskers, and lines over time.

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const COLORS: Record<string, string> = { raw: '#888888', 'raw-meta': '#bbbbbb', 'client-node': '#d62728', 'client-go': '#1f77b4', 'client-go-meta': '#6baed6' };
/** A contender's colour: kube-informer variants in greens, the others fixed. */
export function colorOf(id: string): string {
  if (COLORS[id] !== undefined) return COLORS[id];
  const greens: Record<string, string> = { 'ki-1': '#2ca02c', 'ki-3': '#1b7a1b', 'ki-strip': '#74c476', 'ki-meta': '#a1d99b', 'ki-watchlist': '#41ab5d' };
  return greens[id] ?? '#2ca02c';
}

/** One bar: median with a min–max whisker. */
export interface Bar {
  id: string;
  label: string;
  min: number;
  median: number;
  max: number;
}

/** A bar panel placed at (x, y), `w` wide; returns its SVG elements and height. */
export function barPanel(title: string, unit: string, bars: Bar[], x: number, y: number, w: number, format: (v: number) => string): { svg: string; height: number } {
  const labelW = 250;
  const row = 24;
  const plotW = w - labelW - 70;
  const top = 28;
  const maxV = Math.max(...bars.map((b) => (Number.isFinite(b.max) ? b.max : b.median)), 1);
  const sx = (v: number): number => x + labelW + (v / maxV) * plotW;
  const parts = [`<text x="${x}" y="${y + 16}" font-weight="bold">${esc(title)}</text>`];
  bars.forEach((b, i) => {
    const cy = y + top + i * row;
    parts.push(`<text x="${x + labelW - 8}" y="${cy + 15}" text-anchor="end">${esc(b.label)}</text>`);
    if (!Number.isFinite(b.median)) {
      parts.push(`<text x="${x + labelW + 4}" y="${cy + 15}" fill="#999">no result</text>`);
      return;
    }
    parts.push(`<rect x="${x + labelW}" y="${cy + 4}" width="${Math.max(1, sx(b.median) - x - labelW).toFixed(1)}" height="${row - 8}" fill="${colorOf(b.id)}"/>`);
    if (Number.isFinite(b.min) && b.max > b.min) {
      parts.push(`<line x1="${sx(b.min).toFixed(1)}" x2="${sx(b.max).toFixed(1)}" y1="${cy + row / 2}" y2="${cy + row / 2}" stroke="#000" stroke-width="1.2"/>`);
      for (const v of [b.min, b.max]) parts.push(`<line x1="${sx(v).toFixed(1)}" x2="${sx(v).toFixed(1)}" y1="${cy + 7}" y2="${cy + row - 7}" stroke="#000"/>`);
    }
    parts.push(`<text x="${(Math.max(sx(b.median), Number.isFinite(b.max) ? sx(b.max) : 0) + 6).toFixed(1)}" y="${cy + 15}">${esc(format(b.median))}</text>`);
  });
  const axisY = y + top + bars.length * row + 4;
  parts.push(`<line x1="${x + labelW}" x2="${x + labelW + plotW}" y1="${axisY}" y2="${axisY}" stroke="#444"/>`);
  parts.push(`<text x="${x + labelW}" y="${axisY + 16}" fill="#444">0</text><text x="${x + labelW + plotW}" y="${axisY + 16}" text-anchor="end" fill="#444">${esc(format(maxV))} ${esc(unit)}</text>`);
  return { svg: parts.join('\n'), height: axisY + 24 - y };
}

/** Wraps panels into a complete SVG document. */
export function svgDocument(width: number, height: number, body: string, note: string): string {
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height + 24}" viewBox="0 0 ${width} ${height + 24}" font-family="Helvetica, Arial, sans-serif" font-size="12">
<rect width="100%" height="100%" fill="#fff"/>
${body}
<text x="10" y="${height + 16}" fill="#666" font-size="10">${esc(note)}</text>
</svg>
`;
}

/** One series of a line chart. */
export interface Series {
  id: string;
  label: string;
  points: Array<[number, number]>;
}

/** A line chart of `series` (x in minutes, y in MiB) with a legend on the right. */
export function lineChart(title: string, xUnit: string, yUnit: string, series: Series[], width: number, height: number): string {
  const left = 60;
  const top = 30;
  const legendW = 300;
  const plotW = width - left - legendW - 20;
  const plotH = height - top - 40;
  const all = series.flatMap((s) => s.points);
  const maxX = Math.max(...all.map((p) => p[0]), 1e-9);
  const maxY = Math.max(...all.map((p) => p[1]), 1e-9) * 1.1;
  const sx = (v: number): number => left + (v / maxX) * plotW;
  const sy = (v: number): number => top + plotH - (v / maxY) * plotH;
  const parts = [`<text x="${left}" y="18" font-weight="bold">${esc(title)}</text>`];
  parts.push(`<line x1="${left}" x2="${left + plotW}" y1="${top + plotH}" y2="${top + plotH}" stroke="#444"/><line x1="${left}" x2="${left}" y1="${top}" y2="${top + plotH}" stroke="#444"/>`);
  for (let i = 0; i <= 4; i++) {
    const v = (maxY * i) / 4;
    parts.push(`<text x="${left - 6}" y="${sy(v) + 4}" text-anchor="end" fill="#444">${v.toFixed(0)}</text><line x1="${left}" x2="${left + plotW}" y1="${sy(v)}" y2="${sy(v)}" stroke="#eee"/>`);
    const t = (maxX * i) / 4;
    parts.push(`<text x="${sx(t)}" y="${top + plotH + 16}" text-anchor="middle" fill="#444">${t.toFixed(1)}</text>`);
  }
  parts.push(`<text x="${left + plotW / 2}" y="${top + plotH + 32}" text-anchor="middle" fill="#444">${esc(xUnit)}</text>`);
  parts.push(`<text x="14" y="${top + plotH / 2}" transform="rotate(-90 14 ${top + plotH / 2})" text-anchor="middle" fill="#444">${esc(yUnit)}</text>`);
  series.forEach((s, i) => {
    const d = s.points.map((p, j) => `${j === 0 ? 'M' : 'L'}${sx(p[0]).toFixed(1)},${sy(p[1]).toFixed(1)}`).join(' ');
    parts.push(`<path d="${d}" fill="none" stroke="${colorOf(s.id)}" stroke-width="2"/>`);
    const ly = top + 10 + i * 18;
    parts.push(`<line x1="${left + plotW + 20}" x2="${left + plotW + 40}" y1="${ly}" y2="${ly}" stroke="${colorOf(s.id)}" stroke-width="3"/><text x="${left + plotW + 46}" y="${ly + 4}">${esc(s.label)}</text>`);
  });
  return parts.join('\n');
}
