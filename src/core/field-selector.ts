// Field selectors as Kubernetes parses them (`fields.ParseSelector`): `path=value` terms joined by commas.

import { SelectorParseError } from './label-selector.js';

/** One term of a field selector: `field` compared with `value` by `operator`. */
export interface FieldRequirement {
  /** The dotted field path, e.g. `metadata.name` or `spec.nodeName`. */
  readonly field: string;
  /** `=` and `==` mean equal; `!=` means not equal. */
  readonly operator: '=' | '==' | '!=';
  /** The value, with `\,`, `\=` and `\\` escapes resolved. */
  readonly value: string;
}

const OPERATORS = ['!=', '==', '='] as const;

/**
 * Parses a field selector the way the API server does: terms joined by `,` (AND), each
 * `field=value`, `field==value` or `field!=value`; `\` escapes `,`, `=` and `\` in a value.
 * `''` is the empty selector (every object). Whether the server supports a field for a resource is
 * the server's business (it answers 400 for an unsupported one); this checks only the grammar.
 *
 * Throws {@link SelectorParseError} (code `INVALID_SELECTOR`, `kind: 'field'`) naming the position
 * and the reason.
 */
export function parseFieldSelector(text: string): FieldRequirement[] {
  if (typeof text !== 'string') {
    throw new SelectorParseError(String(text), `expected a string, got ${text === null ? 'null' : typeof text}`, undefined, 'field');
  }
  const out: FieldRequirement[] = [];
  if (text.trim() === '') return out;
  for (const { term, start } of splitUnescaped(text)) {
    const req = parseTerm(text, term, start);
    out.push(req);
  }
  return out;
}

function parseTerm(text: string, term: string, start: number): FieldRequirement {
  for (let i = 0; i < term.length; i++) {
    if (term[i] === '\\') {
      i++;
      continue;
    }
    for (const op of OPERATORS) {
      if (!term.startsWith(op, i)) continue;
      const field = term.slice(0, i).trim();
      if (field === '') throw new SelectorParseError(text, `the term "${term}" has no field name`, start, 'field');
      if (/[\s\\]/.test(field)) throw new SelectorParseError(text, `"${field}" is not a field name`, start, 'field');
      return { field, operator: op, value: unescape(text, term.slice(i + op.length), start + i + op.length) };
    }
  }
  throw new SelectorParseError(text, `cannot understand "${term}": expected field=value, field==value or field!=value`, start, 'field');
}

function unescape(text: string, raw: string, start: number): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i];
    if (ch === '\\') {
      const next = raw[i + 1];
      if (next === undefined || !'\\,='.includes(next)) {
        throw new SelectorParseError(text, `invalid escape sequence in a value`, start + i, 'field');
      }
      out += next;
      i++;
      continue;
    }
    if (ch === '=' || ch === ',') {
      throw new SelectorParseError(text, `"${ch}" in a value must be escaped as "\\${ch}"`, start + i, 'field');
    }
    out += ch;
  }
  return out;
}

function splitUnescaped(text: string): Array<{ term: string; start: number }> {
  const out: Array<{ term: string; start: number }> = [];
  let start = 0;
  for (let i = 0; i <= text.length; i++) {
    if (text[i] === '\\') {
      i++;
      continue;
    }
    if (i === text.length || text[i] === ',') {
      const term = text.slice(start, i);
      if (term.trim() === '') throw new SelectorParseError(text, 'empty term', start, 'field');
      out.push({ term, start });
      start = i + 1;
    }
  }
  return out;
}
