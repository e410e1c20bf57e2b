// JSON Patch (RFC 6902): the diff between two JSON values and the one complete applier, over own keys only.

import { ErrorCodes, KubeInformerError, type ErrorCode } from './errors.js';
import { arrayIndexOf, deepEqual, escapeJsonPointerToken, isObject, JsonPointerError, parseJsonPointer, setMember } from './json.js';
import { validateOptions, type OptionSchemaFor } from './options.js';
import { preview } from './preview.js';

/** A JSON Patch (RFC 6902) operation. */
export interface JsonPatchOperation {
  /** `add`, `remove`, `replace`, `move`, `copy` or `test`. */
  op: 'add' | 'remove' | 'replace' | 'move' | 'copy' | 'test';
  /** A JSON pointer: `/metadata/finalizers/0`. */
  path: string;
  /** The value of `add`, `replace` and `test`. */
  value?: unknown;
  /** The source pointer of `move` and `copy`. */
  from?: string;
}

/**
 * A JSON Patch that is malformed (code `INVALID_JSON_PATCH`) or one of whose operations does not apply
 * to the document (code `JSON_PATCH_FAILED`). `operationIndex` is the failing operation's place in the
 * patch (absent when the patch as a whole is wrong), `pointer` the path (or `from`) it failed at;
 * a malformed pointer is the `cause` (a `JsonPointerError`).
 */
export class JsonPatchError extends KubeInformerError {
  /** The index of the failing operation in the patch; `undefined` when the patch is not an array. */
  readonly operationIndex: number | undefined;
  /** The pointer (`path` or `from`) the operation failed at, when the failure has one. */
  readonly pointer: string | undefined;
  constructor(code: ErrorCode, message: string, options: { operationIndex?: number; pointer?: string; cause?: unknown } = {}) {
    super(code, message, { cause: options.cause });
    this.operationIndex = options.operationIndex;
    this.pointer = options.pointer;
  }
}

const OPS = new Set<string>(['add', 'remove', 'replace', 'move', 'copy', 'test']);

/**
 * The operations that turn `before` into `after` (both plain JSON values); empty when they are deep
 * equal. Objects are compared key by key over their own keys — `remove` for a member `after` lacks,
 * `add` for one `before` lacks (never `replace`, which needs the member to exist), a recursion for one
 * both have — whatever the keys are called (`constructor`, `__proto__`, `a/b`, `~`). Anything else
 * that differs, arrays included, is one `replace` of the whole value: always correct against
 * `before`, with no index bookkeeping. A member whose value is `undefined` counts as absent (JSON
 * has no `undefined`). The operations hold `after`'s values themselves, not copies.
 */
export function jsonPatchDiff(before: unknown, after: unknown): JsonPatchOperation[] {
  const ops: JsonPatchOperation[] = [];
  diffInto(before, after, '', ops);
  return ops;
}

function diffInto(before: unknown, after: unknown, path: string, ops: JsonPatchOperation[]): void {
  if (!isObject(before) || !isObject(after)) {
    if (!deepEqual(before, after)) ops.push({ op: 'replace', path, value: after });
    return;
  }
  for (const key of Object.keys(before)) {
    if (before[key] !== undefined && (!Object.hasOwn(after, key) || after[key] === undefined)) {
      ops.push({ op: 'remove', path: `${path}/${escapeJsonPointerToken(key)}` });
    }
  }
  for (const key of Object.keys(after)) {
    const value = after[key];
    if (value === undefined) continue;
    const child = `${path}/${escapeJsonPointerToken(key)}`;
    if (!Object.hasOwn(before, key) || before[key] === undefined) ops.push({ op: 'add', path: child, value });
    else diffInto(before[key], value, child, ops);
  }
}

/** Options of {@link applyJsonPatch}. */
export interface ApplyJsonPatchOptions {
  /**
   * Whose reading of RFC 6902 to follow. `'rfc6902'` (the default): the RFC's, strictly.
   * `'kube-apiserver'`: as kube-apiserver (evanphx/json-patch v4) applies a PATCH and a mutating
   * webhook's patch — each difference measured on v1.37.2: an array index may have leading zeros
   * or be negative (counted from the end; `-1` in an `add` appends), a `replace` of a missing object
   * member adds it, and an `add`, `replace` or `test` without `value` uses `null`.
   */
  dialect?: 'rfc6902' | 'kube-apiserver';
}

const APPLY_OPTION_SCHEMA: OptionSchemaFor<ApplyJsonPatchOptions> = { dialect: ['rfc6902', 'kube-apiserver'] };

/** One checked operation, with the index it had in the patch. */
interface Step {
  readonly apiServer: boolean;
  readonly index: number;
  readonly op: JsonPatchOperation['op'];
  readonly path: string;
  readonly from: string;
  readonly value: unknown;
}

/**
 * Applies an RFC 6902 JSON Patch to a copy of `document` and returns the copy; `document` and the
 * patch's values are never changed nor shared with the result. Every operation is supported — `add`
 * (an array index inserts before that element, `-` appends; an object member is created or
 * replaced), `remove`, `replace` (the target must exist), `move`, `copy` and `test` — on own members
 * only: a member that `Object.prototype` has but the object does not is missing, and a member named
 * `__proto__` is written as an own member, never as the prototype. As kube-apiserver
 * (evanphx/json-patch) does, a `test` of a missing object member with value `null` holds, so
 * `{ op: 'test', path: '/metadata/finalizers', value: null }` guards "no finalizers yet".
 *
 * Throws a {@link JsonPatchError}: `INVALID_JSON_PATCH` when `patch` is not an array of operations
 * (an unknown `op`, a missing `path`, `from` or `value`), `JSON_PATCH_FAILED` naming the operation's
 * index and pointer when a path does not exist, an index is out of range, `-` names no element, a
 * `test` fails or a `move` goes into its own child. Array indexes are RFC 6901's (digits without a
 * leading zero) unless `options.dialect` is `'kube-apiserver'` (see {@link ApplyJsonPatchOptions}).
 */
export function applyJsonPatch(document: unknown, patch: readonly JsonPatchOperation[], options: ApplyJsonPatchOptions = {}): unknown {
  validateOptions('applyJsonPatch', options, APPLY_OPTION_SCHEMA);
  const apiServer = options.dialect === 'kube-apiserver';
  const raw: unknown = patch;
  if (!Array.isArray(raw)) {
    throw new JsonPatchError(ErrorCodes.INVALID_JSON_PATCH, `a JSON patch must be an array of operations, got ${preview(raw, 60)}`);
  }
  const steps = raw.map((op: unknown, index) => checkOperation(op, index, apiServer));
  let doc = structuredClone(document);
  for (const step of steps) doc = applyStep(doc, step);
  return doc;
}

function checkOperation(raw: unknown, index: number, apiServer: boolean): Step {
  const malformed = (what: string): JsonPatchError =>
    new JsonPatchError(ErrorCodes.INVALID_JSON_PATCH, `JSON patch operation ${index}: ${what}`, { operationIndex: index });
  if (!isObject(raw)) throw malformed(`must be an object, got ${preview(raw, 60)}`);
  const op = raw.op;
  if (typeof op !== 'string' || !OPS.has(op)) throw malformed(`unknown op ${preview(op, 40)} (add, remove, replace, move, copy or test)`);
  if (typeof raw.path !== 'string') throw malformed(`${op} needs a string "path"`);
  const needsFrom = op === 'move' || op === 'copy';
  if (needsFrom && typeof raw.from !== 'string') throw malformed(`${op} needs a string "from"`);
  const hasValue = Object.hasOwn(raw, 'value');
  if ((op === 'add' || op === 'replace' || op === 'test') && !hasValue && !apiServer) throw malformed(`${op} needs a "value"`);
  return { apiServer, index, op: op as Step['op'], path: raw.path, from: needsFrom ? (raw.from as string) : '', value: hasValue ? raw.value : null };
}

function applyStep(doc: unknown, step: Step): unknown {
  switch (step.op) {
    case 'add':
      return addAt(doc, step, step.path, structuredClone(step.value));
    case 'replace':
      return replaceAt(doc, step, structuredClone(step.value));
    case 'remove':
      removeAt(doc, step, step.path);
      return doc;
    case 'move': {
      if (step.path === step.from) {
        valueAt(doc, step, step.from); // RFC 6902: a move onto itself changes nothing, but `from` must exist
        return doc;
      }
      if (step.path.startsWith(`${step.from}/`)) fail(step, step.from, `cannot move ${JSON.stringify(step.from)} into its own child ${JSON.stringify(step.path)}`);
      return addAt(doc, step, step.path, removeAt(doc, step, step.from));
    }
    case 'copy':
      return addAt(doc, step, step.path, structuredClone(valueAt(doc, step, step.from)));
    case 'test':
      testAt(doc, step);
      return doc;
  }
}

function fail(step: Step, pointer: string, what: string, cause?: unknown): never {
  throw new JsonPatchError(ErrorCodes.JSON_PATCH_FAILED, `JSON patch operation ${step.index} (${step.op}): ${what}`, { operationIndex: step.index, pointer, cause });
}

function missing(step: Step, pointer: string): never {
  return fail(step, pointer, `the path ${JSON.stringify(pointer)} does not exist`);
}

function tokensOf(step: Step, pointer: string): string[] {
  try {
    return parseJsonPointer(pointer);
  } catch (err) {
    if (err instanceof JsonPointerError) fail(step, pointer, err.message, err);
    throw err;
  }
}

/** The array or object that holds the last token of `pointer`, and that token; `pointer` is not `""`. */
function parentOf(doc: unknown, step: Step, pointer: string): { parent: unknown[] | Record<string, unknown>; key: string } {
  const tokens = tokensOf(step, pointer);
  let cur = doc;
  for (let i = 0; i < tokens.length - 1; i++) cur = childOf(cur, tokens[i], step, pointer);
  if (!Array.isArray(cur) && !isObject(cur)) missing(step, pointer);
  return { parent: cur, key: tokens[tokens.length - 1] };
}

/** The member or element `token` names in `value`; a missing one fails the step. */
function childOf(value: unknown, token: string, step: Step, pointer: string): unknown {
  if (Array.isArray(value)) {
    const i = indexToken(token, step, value.length);
    if (i === undefined || i < 0 || i >= value.length) missing(step, pointer);
    return value[i];
  }
  if (isObject(value) && Object.hasOwn(value, token)) return value[token];
  return missing(step, pointer);
}

function valueAt(doc: unknown, step: Step, pointer: string): unknown {
  let cur = doc;
  for (const token of tokensOf(step, pointer)) cur = childOf(cur, token, step, pointer);
  return cur;
}

/**
 * The number an array token names: RFC 6901's digits, or — in kube-apiserver's dialect — what Go's
 * `strconv.Atoi` reads (leading zeros and a sign allowed), a negative one counted back from `length`.
 */
function indexToken(token: string, step: Step, length: number): number | undefined {
  if (!step.apiServer) return arrayIndexOf(token);
  if (!/^[+-]?[0-9]+$/.test(token)) return undefined;
  const i = Number(token);
  if (!Number.isSafeInteger(i)) return undefined;
  return i < 0 && i >= -length ? i + length : i;
}

/** The index `key` names in `array` for an insertion (`-`: the end) or, with `existing`, for an element. */
function indexIn(array: unknown[], key: string, step: Step, pointer: string, existing: boolean): number {
  if (key === '-' && !existing) return array.length;
  // An insertion counts a negative index from one past the end (kube-apiserver: `-1` appends).
  const i = indexToken(key, step, existing ? array.length : array.length + 1);
  if (i === undefined) fail(step, pointer, `${JSON.stringify(key)} is not an array index${key === '-' ? ' here: "-" names no element' : ''}`);
  if (i < 0 || (existing ? i >= array.length : i > array.length)) fail(step, pointer, `index ${key} is out of range (the array at it has ${array.length} elements)`);
  return i;
}

function addAt(doc: unknown, step: Step, pointer: string, value: unknown): unknown {
  if (pointer === '') return value;
  const { parent, key } = parentOf(doc, step, pointer);
  if (Array.isArray(parent)) parent.splice(indexIn(parent, key, step, pointer, false), 0, value);
  else setMember(parent, key, value);
  return doc;
}

function replaceAt(doc: unknown, step: Step, value: unknown): unknown {
  if (step.path === '') return value;
  const { parent, key } = parentOf(doc, step, step.path);
  if (Array.isArray(parent)) parent[indexIn(parent, key, step, step.path, true)] = value;
  else if (Object.hasOwn(parent, key) || step.apiServer) setMember(parent, key, value);
  else missing(step, step.path);
  return doc;
}

function removeAt(doc: unknown, step: Step, pointer: string): unknown {
  if (pointer === '') fail(step, pointer, 'cannot remove the whole document');
  const { parent, key } = parentOf(doc, step, pointer);
  if (Array.isArray(parent)) return parent.splice(indexIn(parent, key, step, pointer, true), 1)[0];
  if (!Object.hasOwn(parent, key)) missing(step, pointer);
  const old = parent[key];
  delete parent[key];
  return old;
}

function testAt(doc: unknown, step: Step): void {
  let actual: unknown;
  if (step.path === '') actual = doc;
  else {
    const { parent, key } = parentOf(doc, step, step.path);
    // kube-apiserver's rule (evanphx/json-patch): a missing object member tests equal to null.
    if (!Array.isArray(parent) && !Object.hasOwn(parent, key)) {
      if (step.value === null) return;
      missing(step, step.path);
    }
    actual = Array.isArray(parent) ? parent[indexIn(parent, key, step, step.path, true)] : parent[key];
  }
  if (!deepEqual(actual, step.value)) {
    fail(step, step.path, `test failed: the value at ${JSON.stringify(step.path)} is ${preview(actual, 60)}, not ${preview(step.value, 60)}`);
  }
}
