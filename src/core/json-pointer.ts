// JSON Pointers (RFC 6901): parse a pointer into its reference tokens and format tokens back into a pointer.

import { ErrorCodes, KubeInformerError } from './errors.js';

/**
 * A string that is not a JSON Pointer (code `INVALID_JSON_POINTER`): it is neither `""` (the whole
 * document) nor starts with `/`, or it holds a `~` not followed by `0` or `1`. `pointer` is the string.
 */
export class JsonPointerError extends KubeInformerError {
  /** The string that failed to parse. */
  readonly pointer: string;
  constructor(pointer: string, message: string) {
    super(ErrorCodes.INVALID_JSON_POINTER, message);
    this.pointer = pointer;
  }
}

/**
 * The reference tokens of a JSON Pointer, unescaped (`~1` → `/`, `~0` → `~`): `"/a~1b/0"` gives
 * `["a/b", "0"]`, `""` gives `[]` (the whole document), `"/"` gives `[""]` (the member named by the
 * empty string). Throws a {@link JsonPointerError} for a string that is not a pointer.
 */
export function parseJsonPointer(pointer: string): string[] {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) {
    throw new JsonPointerError(pointer, `${JSON.stringify(pointer)} is not a JSON pointer: it must be empty or start with "/"`);
  }
  if (/~(?![01])/.test(pointer)) {
    throw new JsonPointerError(pointer, `${JSON.stringify(pointer)} is not a JSON pointer: "~" must be followed by "0" or "1"`);
  }
  return pointer.slice(1).split('/').map(unescapeJsonPointerToken);
}

/** One reference token escaped for a pointer (RFC 6901): `~` → `~0`, then `/` → `~1`. */
export function escapeJsonPointerToken(token: string): string {
  return token.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** One escaped reference token read back: `~1` → `/`, then `~0` → `~` (in that order, so `~01` is `~1`). */
export function unescapeJsonPointerToken(token: string): string {
  return token.replace(/~1/g, '/').replace(/~0/g, '~');
}

/** The JSON Pointer of `tokens` (each escaped): `["a/b", "0"]` gives `"/a~1b/0"`, `[]` gives `""`. */
export function formatJsonPointer(tokens: readonly string[]): string {
  let out = '';
  for (const token of tokens) out += `/${escapeJsonPointerToken(token)}`;
  return out;
}

/**
 * The array index a reference token names (RFC 6901: `0`, or digits without a leading zero), or
 * `undefined` for any other token (`-`, `01`, `-1`, `1e3`, ` 1`).
 */
export function arrayIndexOf(token: string): number | undefined {
  if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined;
  const i = Number(token);
  return Number.isSafeInteger(i) ? i : undefined;
}
