// The label-selector text parser: the grammar of Kubernetes' labels.Parse, with errors that say where.

import {
  checkRequirement,
  labelKeyProblem,
  labelSelectorFromSet,
  labelValueProblem,
  selectorFromRequirements,
  SelectorParseError,
  type LabelRequirement,
  type LabelSelector,
  type SelectorOperator,
} from './label-selector.js';

type TokenType = 'id' | 'end' | '(' | ')' | ',' | '!' | '=' | '==' | '!=' | '>' | '<' | 'in' | 'notin';

interface Token {
  readonly type: TokenType;
  readonly text: string;
  readonly pos: number;
}

const SPECIAL = new Set(['=', '!', '(', ')', ',', '>', '<']);
const TWO_CHAR = new Set(['!=', '==']);
const WHITESPACE = new Set([' ', '\t', '\r', '\n']);

/** Splits the text into tokens; whitespace separates tokens and is otherwise ignored. */
function lex(text: string): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  while (true) {
    while (i < text.length && WHITESPACE.has(text[i])) i++;
    if (i >= text.length) break;
    const start = i;
    if (SPECIAL.has(text[i])) {
      const two = text.slice(i, i + 2);
      const op = TWO_CHAR.has(two) ? two : text[i];
      i += op.length;
      tokens.push({ type: op as TokenType, text: op, pos: start });
      continue;
    }
    while (i < text.length && !SPECIAL.has(text[i]) && !WHITESPACE.has(text[i])) i++;
    const word = text.slice(start, i);
    const type: TokenType = word === 'in' || word === 'notin' ? word : 'id';
    tokens.push({ type, text: word, pos: start });
  }
  tokens.push({ type: 'end', text: '', pos: text.length });
  return tokens;
}

function describe(t: Token): string {
  if (t.type === 'end') return 'end of input';
  return `'${t.text}'`;
}

const OPERATORS: Partial<Record<TokenType, SelectorOperator>> = {
  in: 'in',
  notin: 'notin',
  '=': '=',
  '==': '==',
  '!=': '!=',
  '>': 'gt',
  '<': 'lt',
};

/** Recursive descent over the token list, one requirement at a time. */
class Parser {
  readonly #text: string;
  readonly #tokens: Token[];
  #at = 0;

  constructor(text: string) {
    this.#text = text;
    this.#tokens = lex(text);
  }

  parse(): LabelRequirement[] {
    const reqs: LabelRequirement[] = [];
    let t = this.#peekValue();
    if (t.type === 'end') return reqs;
    while (true) {
      if (t.type !== 'id' && t.type !== '!') this.#fail(t, `expected a label key or '!key' but found ${describe(t)}`);
      reqs.push(this.#requirement());
      const sep = this.#next();
      if (sep.type === 'end') return reqs;
      if (sep.type !== ',') this.#fail(sep, `expected ',' or end of input but found ${describe(sep)}`);
      t = this.#peekValue();
      if (t.type !== 'id' && t.type !== '!') this.#fail(t, `expected a requirement after ',' but found ${describe(t)}`);
    }
  }

  #requirement(): LabelRequirement {
    let t = this.#nextValue();
    const negated = t.type === '!';
    if (negated) t = this.#nextValue();
    if (t.type !== 'id') this.#fail(t, `expected a label key${negated ? " after '!'" : ''} but found ${describe(t)}`);
    const key = t.text;
    const keyProblem = labelKeyProblem(key);
    if (keyProblem !== undefined) this.#fail(t, keyProblem);
    const after = this.#peekValue();
    if (after.type === 'end' || after.type === ',') return this.#check(t, key, negated ? '!' : 'exists', []);
    if (negated) this.#fail(after, `'!${key}' stands alone; found ${describe(after)} after it`);
    const opToken = this.#next();
    const op = OPERATORS[opToken.type];
    if (op === undefined) {
      this.#fail(opToken, `expected an operator (=, ==, !=, in, notin, >, <) after key '${key}' but found ${describe(opToken)}`);
    }
    const values = op === 'in' || op === 'notin' ? this.#valueSet(op) : [this.#exactValue(op)];
    return this.#check(opToken, key, op, values);
  }

  /** `( v1, v2, ... )`; empty entries are the empty value, as Kubernetes reads them. */
  #valueSet(op: string): string[] {
    const open = this.#nextValue();
    if (open.type !== '(') this.#fail(open, `expected '(' after '${op}' but found ${describe(open)}`);
    const first = this.#peekValue();
    if (first.type === ')') {
      this.#next();
      return [''];
    }
    if (first.type !== 'id' && first.type !== ',') {
      this.#fail(first, `expected a value, ',' or ')' but found ${describe(first)}`);
    }
    const values: string[] = [];
    while (true) {
      const t = this.#nextValue();
      if (t.type === 'id') {
        this.#value(t);
        values.push(t.text);
        const la = this.#peekValue();
        if (la.type === ')') break;
        if (la.type !== ',') this.#fail(la, `expected ',' or ')' in the value list but found ${describe(la)}`);
      } else if (t.type === ',') {
        if (values.length === 0) values.push('');
        const la = this.#peekValue();
        if (la.type === ')') {
          values.push('');
          break;
        }
        if (la.type === ',') {
          this.#next();
          values.push('');
        }
      } else {
        this.#fail(t, `expected a value or ',' in the value list but found ${describe(t)}`);
      }
    }
    this.#next(); // the ')'
    return values;
  }

  /** The single value after `=`, `==`, `!=`, `>` or `<`; nothing before ',' or the end is `''`. */
  #exactValue(op: SelectorOperator): string {
    const la = this.#peekValue();
    if (la.type === 'end' || la.type === ',') return '';
    const t = this.#nextValue();
    if (t.type !== 'id') this.#fail(t, `expected a value after '${op}' but found ${describe(t)}`);
    this.#value(t);
    if ((op === 'gt' || op === 'lt') && !/^[+-]?[0-9]+$/.test(t.text)) {
      this.#fail(t, `'${op === 'gt' ? '>' : '<'}' needs an integer value, not '${t.text}'`);
    }
    return t.text;
  }

  #value(t: Token): void {
    const problem = labelValueProblem(t.text);
    if (problem !== undefined) this.#fail(t, problem);
  }

  #check(at: Token, key: string, op: SelectorOperator, values: string[]): LabelRequirement {
    const r = checkRequirement(key, op, values);
    if (typeof r === 'string') this.#fail(at, r);
    return r;
  }

  /** Looks at the next token where a value may stand: `in` and `notin` are plain words there. */
  #peekValue(): Token {
    return asValue(this.#tokens[this.#at]);
  }

  /** Takes the next token as it is (where an operator may stand). */
  #next(): Token {
    const t = this.#tokens[this.#at];
    if (t.type !== 'end') this.#at++;
    return t;
  }

  /** Takes the next token where a key or value may stand. */
  #nextValue(): Token {
    return asValue(this.#next());
  }

  #fail(at: Token, reason: string): never {
    throw new SelectorParseError(this.#text, reason, at.pos);
  }
}

/** Where a key or value may stand, the words `in` and `notin` are identifiers. */
function asValue(t: Token): Token {
  return t.type === 'in' || t.type === 'notin' ? { type: 'id', text: t.text, pos: t.pos } : t;
}

/**
 * Parses a label selector written as Kubernetes writes it (`k8s.io/apimachinery/pkg/labels.Parse`):
 * requirements joined by `,` (AND), each one of `key=value`, `key==value`, `key!=value`,
 * `key in (a,b)`, `key notin (a,b)`, `key` (exists), `!key` (does not exist), `key>1`, `key<1`.
 * Whitespace between tokens is ignored. Keys and values are validated as Kubernetes validates them.
 * `''` (or only whitespace) is the empty selector, which matches everything.
 *
 * Throws {@link SelectorParseError} (code `INVALID_SELECTOR`) naming the 0-based position and the
 * reason for anything malformed; it never falls back to matching everything.
 */
export function parseLabelSelector(text: string): LabelSelector {
  if (typeof text !== 'string') {
    throw new SelectorParseError(String(text), `expected a string, got ${text === null ? 'null' : typeof text}`);
  }
  return selectorFromRequirements(new Parser(text).parse());
}

/** What listers accept as a selector: text, a parsed selector, or a `matchLabels`-style record. */
export type LabelSelectorInput = string | LabelSelector | Readonly<Record<string, string>>;

/**
 * Turns any {@link LabelSelectorInput} into a {@link LabelSelector}: text is parsed, a record is read
 * as `matchLabels`, a selector is returned as is. Throws {@link SelectorParseError} when invalid.
 * (The API's `{matchLabels, matchExpressions}` object form goes through `labelSelectorFromObject`.)
 */
export function toLabelSelector(input: LabelSelectorInput): LabelSelector {
  if (typeof input === 'string') return parseLabelSelector(input);
  if (input !== null && typeof input === 'object' && typeof (input as LabelSelector).matches === 'function') {
    return input as LabelSelector;
  }
  return labelSelectorFromSet(input as Readonly<Record<string, string>>);
}
