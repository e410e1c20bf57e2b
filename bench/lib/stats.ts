// Small statistics for benchmark figures: min/median/max over repetitions, ratios, a least-squares slope.

/** Minimum, median and maximum of a set of measurements (NaN when empty), plus how many there were. */
export interface Summary {
  min: number;
  median: number;
  max: number;
  n: number;
}

/** Summarises `values` (non-finite values are ignored). */
export function summarize(values: number[]): Summary {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return { min: Number.NaN, median: Number.NaN, max: Number.NaN, n: 0 };
  const mid = v.length >> 1;
  const median = v.length % 2 === 1 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
  return { min: v[0], median, max: v[v.length - 1], n: v.length };
}

/** Least-squares slope of y over x (NaN with fewer than two points). */
export function slope(xs: number[], ys: number[]): number {
  const n = Math.min(xs.length, ys.length);
  if (n < 2) return Number.NaN;
  let sx = 0;
  let sy = 0;
  for (let i = 0; i < n; i++) {
    sx += xs[i];
    sy += ys[i];
  }
  const mx = sx / n;
  const my = sy / n;
  let num = 0;
  let den = 0;
  for (let i = 0; i < n; i++) {
    num += (xs[i] - mx) * (ys[i] - my);
    den += (xs[i] - mx) ** 2;
  }
  return den === 0 ? Number.NaN : num / den;
}

/** Formats a number with `digits` significant decimals, thin thousands separators, `—` for NaN. */
export function fmt(x: number, digits = 0): string {
  if (!Number.isFinite(x)) return '—';
  return x.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }).replace(/,/g, '\u202f');
}

/** `min / median / max` of a summary. */
export function fmtSummary(s: Summary, digits = 0): string {
  if (s.n === 0) return '—';
  if (s.n === 1) return fmt(s.median, digits);
  return `${fmt(s.min, digits)} / **${fmt(s.median, digits)}** / ${fmt(s.max, digits)}`;
}
