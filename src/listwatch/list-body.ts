// Decodes a list response body: one JSON.parse for ordinary sizes, item by item past the string limit.

import { constants } from 'node:buffer';
import { PREVIEW_MAX_CHARS } from '../core/index.js';
import { ResponseDecodeError } from './errors.js';

/**
 * Bodies of at least this many bytes are decoded item by item (see {@link decodeListBody}) instead of
 * as one string: V8's maximum string length (2^29 − 24 characters on 64-bit, ~512 MiB), the first size
 * that cannot be one string. Below it one `JSON.parse` is 10–25 % faster than the item-by-item scan
 * (measured on a 50 000-pod body of 252 MB); the price is the body held once more, as a string, while
 * it is parsed.
 */
export const DEFAULT_LARGE_LIST_THRESHOLD_BYTES = constants.MAX_STRING_LENGTH;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
/** The bytes of `"items"`, the usual spelling of the key. */
const ITEMS_KEY = Buffer.from('"items"');

/** A bounded piece of the body for an error preview (a few bytes per character at most). */
export function previewOf(buf: Buffer, start: number, end = buf.length): string {
  return buf.toString('utf8', start, Math.min(end, start + PREVIEW_MAX_CHARS * 4));
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** The index of the quote that closes the string opened at `open`, or -1 when the body ends first. */
function stringEnd(buf: Buffer, open: number): number {
  let at = open;
  for (;;) {
    at = buf.indexOf(QUOTE, at + 1);
    if (at < 0) return -1;
    let slashes = 0;
    for (let k = at - 1; buf[k] === BACKSLASH; k--) slashes++;
    if (slashes % 2 === 0) return at;
  }
}

/** Whether the key string `buf[start..end]` (quotes included) spells `items`, escapes decoded. */
function isItemsKey(buf: Buffer, start: number, end: number): boolean {
  const length = end - start;
  if (length === ITEMS_KEY.length) return buf.compare(ITEMS_KEY, 0, ITEMS_KEY.length, start, end) === 0;
  const slash = buf.indexOf(BACKSLASH, start);
  if (length > 64 || slash < 0 || slash >= end) return false;
  try {
    return JSON.parse(buf.toString('utf8', start, end)) === 'items';
  } catch {
    return false;
  }
}

/**
 * Decodes a list body that may exceed V8's maximum string length: scans the bytes of the top-level
 * object (strings, escapes, nesting depth) for its `items` array, `JSON.parse`s each element on its
 * own, and parses the rest (the envelope: `apiVersion`, `kind`, `metadata`) with `"items":[]` in place
 * of the array. The result equals `JSON.parse` of the whole body. A body that is not JSON throws
 * `ResponseDecodeError` (`malformed-json`) with a preview of the offending part.
 */
export function parseLargeList(buf: Buffer, what: string): unknown {
  const malformed = (detail: string, at: number, cause?: unknown): ResponseDecodeError =>
    new ResponseDecodeError('malformed-json', `${what}: the response is not JSON (${detail} at byte ${at})`, previewOf(buf, at), {
      cause,
    });
  let first = 0;
  while (first < buf.length && isSpace(buf[first])) first++;
  if (buf[first] !== OPEN_BRACE) {
    if (buf[first] === OPEN_BRACKET) throw new ResponseDecodeError('not-a-list', `${what}: the response has no items array`, previewOf(buf, first));
    throw malformed('expected an object', first);
  }
  /** The byte ranges of `items` arrays (brackets included) left out of the envelope. */
  const cut: Array<[number, number]> = [];
  let items: unknown[] = [];
  let depth = 0;
  let expectKey = false;
  let lastKeyIsItems = false;
  let inItems = false;
  let elementStart = -1;
  let afterComma = false;
  const pushElement = (start: number, end: number): void => {
    try {
      items.push(JSON.parse(buf.toString('utf8', start, end)));
    } catch (err) {
      throw malformed(`item ${items.length} does not parse`, start, err);
    }
  };
  let i = first;
  for (; i < buf.length; i++) {
    const c = buf[i];
    if (isSpace(c)) continue;
    if (inItems && depth === 2 && elementStart < 0 && c !== COMMA && c !== CLOSE_BRACKET) elementStart = i;
    if (c === QUOTE) {
      const close = stringEnd(buf, i);
      if (close < 0) throw malformed('a string is not closed', i);
      if (depth === 1 && expectKey) {
        lastKeyIsItems = isItemsKey(buf, i, close + 1);
        expectKey = false;
      }
      i = close;
      continue;
    }
    if (c === OPEN_BRACE || c === OPEN_BRACKET) {
      if (depth === 1 && c === OPEN_BRACKET && lastKeyIsItems) {
        // A repeated key replaces the earlier value, as in JSON.parse.
        inItems = true;
        items = [];
        elementStart = -1;
        afterComma = false;
        cut.push([i, -1]);
      }
      depth++;
      if (depth === 1) expectKey = true;
    } else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
      if (inItems && depth === 2) {
        if (c !== CLOSE_BRACKET) throw malformed('the items array is closed by }', i);
        if (elementStart >= 0) pushElement(elementStart, i);
        else if (afterComma) throw malformed('an empty item', i);
        inItems = false;
        cut[cut.length - 1][1] = i + 1;
      }
      depth--;
      if (depth === 0) break;
    } else if (c === COMMA) {
      if (inItems && depth === 2) {
        if (elementStart < 0) throw malformed('an empty item', i);
        pushElement(elementStart, i);
        elementStart = -1;
        afterComma = true;
      } else if (depth === 1) {
        expectKey = true;
        lastKeyIsItems = false;
      }
    }
  }
  if (depth !== 0) throw malformed('the body ends inside the object', Math.max(0, buf.length - PREVIEW_MAX_CHARS));
  const parts: string[] = [];
  let envelope: unknown;
  try {
    let from = 0;
    for (const [start, end] of cut) {
      parts.push(buf.toString('utf8', from, start), '[]');
      from = end;
    }
    parts.push(buf.toString('utf8', from));
    envelope = JSON.parse(parts.join(''));
  } catch (err) {
    throw malformed('the list envelope does not parse', 0, err);
  }
  if (cut.length > 0 && envelope !== null && typeof envelope === 'object') {
    const list = envelope as { items?: unknown };
    // Only when the last `items` key held an array: JSON.parse keeps the last value of a repeated key.
    if (Array.isArray(list.items)) list.items = items;
  }
  return envelope;
}

/**
 * Decodes a whole list body held as one Buffer: `JSON.parse` of its text when it is shorter than
 * `thresholdBytes` (capped at V8's maximum string length, so a larger body never becomes one string),
 * {@link parseLargeList} otherwise. Throws `ResponseDecodeError` (`malformed-json`) when the body is
 * not JSON.
 */
export function decodeListBody(buf: Buffer, what: string, thresholdBytes = DEFAULT_LARGE_LIST_THRESHOLD_BYTES): unknown {
  if (buf.length >= Math.min(thresholdBytes, constants.MAX_STRING_LENGTH)) return parseLargeList(buf, what);
  const body = buf.toString('utf8');
  try {
    return JSON.parse(body);
  } catch (err) {
    throw new ResponseDecodeError('malformed-json', `${what}: the response is not JSON`, body, { cause: err });
  }
}
