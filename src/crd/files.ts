// Reads CustomResourceDefinitions from YAML or JSON files as plain data, resolved as kubectl resolves them.

import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { extname, join, resolve } from 'node:path';
import { LineCounter, parseAllDocuments, type DocumentOptions, type ParseOptions, type SchemaOptions, type ToJSOptions } from 'yaml';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { ErrorCodes, KubeInformerError } from '../core/errors.js';
import { isObject } from '../core/json.js';

/** A file or directory of CRDs that cannot be read: missing, invalid YAML, a document that is not a CRD (code `CRD_FILE_INVALID`). */
export class CustomResourceDefinitionFileError extends KubeInformerError {
  /** The file (or directory) at fault, as it was named. */
  readonly path: string;
  /** The 1-based number of the document at fault in the file; undefined when the fault is the file itself. */
  readonly document: number | undefined;
  /** The 1-based line where the fault is (the document's first line, or the YAML error's); undefined when the fault is the file itself. */
  readonly line: number | undefined;
  constructor(path: string, message: string, at: { document?: number; line?: number } = {}) {
    super(ErrorCodes.CRD_FILE_INVALID, message);
    this.path = path;
    this.document = at.document;
    this.line = at.line;
  }
}

/** The extensions read in a directory (as controller-runtime's envtest); other files are ignored. */
const EXTENSIONS = new Set(['.yaml', '.yml', '.json']);

/**
 * As kubectl reads YAML (sigs.k8s.io/yaml over go-yaml v2): YAML 1.1, so `<<` merge keys and anchors
 * resolve and `yes`/`on`/`y` are booleans; but a timestamp stays the string it is written as (go-yaml
 * keeps it a string when decoding into untyped data).
 */
const YAML_OPTIONS: ParseOptions & DocumentOptions & SchemaOptions = {
  version: '1.1',
  merge: true,
  customTags: (tags) => tags.filter((tag) => typeof tag === 'string' || !tag.tag.endsWith(':timestamp')),
};
const TO_JS: ToJSOptions = { maxAliasCount: 1000 };

/**
 * Reads the CustomResourceDefinitions of a `.yaml`/`.yml`/`.json` file, or of every such file of a
 * directory (not recursive, in name order; other files are ignored), as plain data: every key as
 * written (`default`, `x-kubernetes-validations`, …), anchors and `<<` merge keys resolved, YAML 1.1
 * scalars as kubectl reads them. Empty documents (`---` with nothing, or only comments) are skipped, a
 * `kind: List` gives its items, as `kubectl create -f` does.
 *
 * Recovery: throws {@link CustomResourceDefinitionFileError} (`CRD_FILE_INVALID`) naming the file,
 * the document and its line when the path does not exist, a document is not valid YAML, a document is
 * not a CustomResourceDefinition (these files are CRDs only: kubectl would apply the other kinds, so
 * skipping one would install less than `kubectl create -f`; the message names its kind), or the path
 * holds no CRD at all (a wrong directory, such as `config/crd` for `config/crd/bases`).
 */
export function readCustomResourceDefinitionFiles(path: string): CustomResourceDefinition[] {
  if (!existsSync(path)) {
    throw new CustomResourceDefinitionFileError(path, `${path} does not exist (a relative path is resolved from the working directory, ${resolve('.')})`);
  }
  const isDirectory = statSync(path).isDirectory();
  const files = isDirectory
    ? readdirSync(path)
        .filter((name) => EXTENSIONS.has(extname(name).toLowerCase()))
        .sort()
        .map((name) => join(path, name))
        .filter((file) => statSync(file).isFile())
    : [path];
  const out = files.flatMap((file) => parseCustomResourceDefinitions(readFileSync(file, 'utf8'), file));
  if (out.length === 0) {
    const what = isDirectory ? `${path} holds no CustomResourceDefinition in its .yaml, .yml or .json files (${files.length} read; subdirectories are not read)` : `${path} holds no CustomResourceDefinition`;
    throw new CustomResourceDefinitionFileError(path, what);
  }
  return out;
}

/**
 * The CRDs of the YAML (or JSON) `text` read from `file` (named in errors); the rules of
 * {@link readCustomResourceDefinitionFiles}, except that with `otherKinds: 'skip'` a document of another
 * kind is passed over (`kube-informer crd types` reads CRDs out of any manifest bundle).
 */
export function parseCustomResourceDefinitions(text: string, file: string, options: { otherKinds?: 'refuse' | 'skip' } = {}): CustomResourceDefinition[] {
  const lines = new LineCounter();
  const out: CustomResourceDefinition[] = [];
  for (const [i, doc] of parseAllDocuments(text, { ...YAML_OPTIONS, lineCounter: lines }).entries()) {
    const document = i + 1;
    const error = doc.errors[0];
    if (error !== undefined) {
      const line = error.linePos?.[0].line ?? lines.linePos(error.pos[0]).line;
      const col = error.linePos?.[0].col ?? lines.linePos(error.pos[0]).col;
      const reason = error.message.split('\n', 1)[0].replace(/ at line \d+, column \d+:?$/, '');
      throw new CustomResourceDefinitionFileError(file, `${file}:${line}:${col}: document ${document} is not valid YAML: ${reason}`, { document, line });
    }
    const value: unknown = doc.toJS(TO_JS);
    // Nothing (`---` alone, only comments) or a bare null: skipped, as kubectl skips it.
    if (value === null || value === undefined) continue;
    const line = lines.linePos(doc.contents?.range?.[0] ?? doc.range[0]).line;
    const listed = isList(value);
    for (const [j, item] of (listed ? value.items : [value]).entries()) {
      const where = listed ? `document ${document} (a List), item ${j}` : `document ${document}`;
      if (!isObject(item)) {
        throw new CustomResourceDefinitionFileError(file, `${file}:${line}: ${where} is not an object (${item === null ? 'null' : Array.isArray(item) ? 'a list' : typeof item}), not a CustomResourceDefinition`, { document, line });
      }
      if (item.kind !== 'CustomResourceDefinition') {
        if (options.otherKinds === 'skip') continue;
        const kind = typeof item.kind === 'string' ? `a ${item.kind}${typeof item.apiVersion === 'string' ? ` (${item.apiVersion})` : ''}` : 'an object without a kind';
        throw new CustomResourceDefinitionFileError(
          file,
          `${file}:${line}: ${where} is ${kind}, not a CustomResourceDefinition. A CRD file holds CRDs only (kubectl would apply it, this would not): move it out, or create it in the test`,
          { document, line },
        );
      }
      out.push(item as unknown as CustomResourceDefinition);
    }
  }
  return out;
}

/** `kind: List` (`v1`), which kubectl expands into its items. */
function isList(value: unknown): value is { items: unknown[] } {
  return isObject(value) && value.kind === 'List' && Array.isArray(value.items);
}
