// A short, bounded, never-throwing text preview of any value, for error messages.

/** The longest preview {@link preview} returns, in characters. */
export const PREVIEW_MAX_CHARS = 200;

/**
 * Renders `value` as compact JSON cut to `maxChars` (with `…` when cut). Never throws, whatever the
 * value (cycles, BigInt, getters that throw): error messages must not fail while describing a failure.
 */
export function preview(value: unknown, maxChars = PREVIEW_MAX_CHARS): string {
  let text: string;
  try {
    const seen = new WeakSet<object>();
    text =
      JSON.stringify(value, (_k, v: unknown) => {
        if (typeof v === 'bigint') return `${v}n`;
        if (v !== null && typeof v === 'object') {
          if (seen.has(v)) return '[Circular]';
          seen.add(v);
        }
        return v;
      }) ?? String(value);
  } catch {
    try {
      text = String(value);
    } catch {
      text = '[unprintable]';
    }
  }
  return text.length > maxChars ? `${text.slice(0, maxChars - 1)}…` : text;
}
