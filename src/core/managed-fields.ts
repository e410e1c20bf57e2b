// Field ownership as the API server records it (managedFields, FieldsV1), and extract: the fields one manager owns.

import { deepEqual, isObject } from './json.js';
import { InvalidOptionError } from './options.js';

/** Every field optional, at every depth (arrays hold deep-partial elements). */
export type DeepPartial<T> = T extends string | number | boolean | bigint | symbol | null | undefined | ((...args: never[]) => unknown)
  ? T
  : T extends ReadonlyArray<infer E>
    ? Array<DeepPartial<E>>
    : { -readonly [K in keyof T]?: DeepPartial<T[K]> };

/** The `metadata` every apply configuration carries: which object it applies to. */
export interface ApplyMetadata {
  /** The object's name. */
  name: string;
  /** The object's namespace (required for namespaced resources, checked before sending). */
  namespace?: string;
}

/** The identity every apply configuration carries. */
export interface ApplyIdentity {
  /** The API version (`v1`, `apps/v1`). */
  apiVersion: string;
  /** The kind (`ConfigMap`). */
  kind: string;
  /** The name and namespace; other metadata (labels, annotations, owner references) is applied as any field. */
  metadata: ApplyMetadata;
}

/**
 * A server-side apply configuration of `T`: the fields you want to own, every one optional, with the
 * identity required — `apiVersion`, `kind` and `metadata.name` (and `metadata.namespace` for a
 * namespaced resource, checked at run time). Fields you leave out are not yours: once you stop
 * applying a field, the server removes it unless another manager owns it.
 */
export type ApplyConfiguration<T> = DeepPartial<T> & ApplyIdentity;

/**
 * A set of fields in the API server's `FieldsV1` form: each key one step — `f:<name>` a field,
 * `k:<json>` a list element by its key fields, `v:<json>` a set element by value, `i:<n>` a list
 * element by index, `.` the node itself — each value the set below it (`{}` for a leaf).
 */
export interface FieldsV1 {
  /** One step of a path and the fields below it. */
  [step: string]: FieldsV1;
}

/** One entry of `metadata.managedFields`: the fields a manager owns, and how it came to own them. */
export interface ManagedFieldsEntry {
  /** The field manager (`kubectl`, your controller's name). */
  manager?: string;
  /** `Apply` (server-side apply) or `Update` (create, update, patch). */
  operation?: string;
  /** The API version the fields are written in. */
  apiVersion?: string;
  /** When the entry last changed. */
  time?: string;
  /** Always `FieldsV1`. */
  fieldsType?: string;
  /** The owned fields. */
  fieldsV1?: FieldsV1;
  /** `status` (or `scale`) when the fields were written through that subresource. */
  subresource?: string;
}

/** Options of {@link extract}. */
export interface ExtractOptions {
  /** The subresource the fields were applied through (`'status'` for `applyStatus`). Default none: the main resource. */
  subresource?: string;
}

/** The element of `list` a `k:` step names: every key field equal. */
function elementByKey(list: unknown[], keyJson: string): unknown {
  const key = JSON.parse(keyJson) as Record<string, unknown>;
  return list.find((e) => isObject(e) && Object.entries(key).every(([k, v]) => deepEqual(e[k], v)));
}

/** The part of `value` that `fields` names (a deep copy), or `undefined` when none of it is there. */
function pick(value: unknown, fields: FieldsV1): unknown {
  const steps = Object.keys(fields).filter((s) => s !== '.');
  if (steps.length === 0) {
    if (Object.hasOwn(fields, '.')) return isObject(value) ? {} : Array.isArray(value) ? [] : structuredClone(value); // only the node's existence
    return structuredClone(value); // a leaf: owned as a whole
  }
  if (isObject(value)) {
    const out: Record<string, unknown> = {};
    for (const step of steps) {
      if (!step.startsWith('f:')) continue;
      const name = step.slice(2);
      if (!Object.hasOwn(value, name)) continue;
      const picked = pick(value[name], fields[step]);
      if (picked !== undefined) out[name] = picked;
    }
    return out;
  }
  if (Array.isArray(value)) {
    const out: unknown[] = [];
    for (const step of steps) {
      let element: unknown;
      if (step.startsWith('k:')) {
        element = elementByKey(value, step.slice(2));
        // The key fields identify the element: they are always part of it.
        if (isObject(element)) {
          const picked = pick(element, fields[step]) as Record<string, unknown> | undefined;
          out.push({ ...(JSON.parse(step.slice(2)) as Record<string, unknown>), ...picked });
        }
        continue;
      }
      if (step.startsWith('v:')) {
        const v = JSON.parse(step.slice(2)) as unknown;
        if (value.some((e) => deepEqual(e, v))) out.push(v);
        continue;
      }
      if (step.startsWith('i:')) {
        element = value[Number(step.slice(2))];
        if (element !== undefined) out.push(pick(element, fields[step]));
      }
    }
    return out;
  }
  return structuredClone(value);
}

/**
 * The fields `fieldManager` owns in `object` through server-side apply, as an apply configuration
 * (client-go's `Extract…`): read from the `managedFields` entry of that manager with operation
 * `Apply` (and `subresource`), with the identity (`apiVersion`, `kind`, `metadata.name`,
 * `metadata.namespace`) always set. Change what you own and apply it back: fields you leave out
 * are removed. A manager that never applied gets just the identity. Throws `INVALID_OPTION` when
 * `object` lacks its identity (an object from the API server or the cache has it — unless a
 * transform stripped `managedFields`, in which case nothing can be extracted).
 */
export function extract<T>(object: T, fieldManager: string, options: ExtractOptions = {}): ApplyConfiguration<T> {
  const o = object as { apiVersion?: unknown; kind?: unknown; metadata?: { name?: unknown; namespace?: unknown; managedFields?: readonly ManagedFieldsEntry[] } } | null;
  if (o === null || typeof o !== 'object' || typeof o.apiVersion !== 'string' || typeof o.kind !== 'string' || typeof o.metadata?.name !== 'string') {
    throw new InvalidOptionError('extract: the object needs apiVersion, kind and metadata.name (use it as the API server or the cache returned it)');
  }
  const subresource = options.subresource ?? '';
  const entry = (o.metadata.managedFields ?? []).find((e) => e.manager === fieldManager && e.operation === 'Apply' && (e.subresource ?? '') === subresource);
  const owned = entry?.fieldsV1 === undefined ? {} : (pick(object, entry.fieldsV1) as Record<string, unknown>);
  const metadata = { ...(isObject(owned.metadata) ? owned.metadata : {}), name: o.metadata.name };
  if (typeof o.metadata.namespace === 'string' && o.metadata.namespace !== '') (metadata as Record<string, unknown>).namespace = o.metadata.namespace;
  return { ...owned, apiVersion: o.apiVersion, kind: o.kind, metadata } as ApplyConfiguration<T>;
}

/** A field path in the form conflicts name it: `.data.key`, `.spec.containers[name="app"].image`. */
export function formatFieldPath(steps: readonly string[]): string {
  return steps
    .filter((s) => s !== '.')
    .map((s) => {
      if (s.startsWith('f:')) return `.${s.slice(2)}`;
      if (s.startsWith('k:')) {
        const key = JSON.parse(s.slice(2)) as Record<string, unknown>;
        return `[${Object.entries(key).map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
      }
      if (s.startsWith('v:')) return `[=${s.slice(2)}]`;
      if (s.startsWith('i:')) return `[${s.slice(2)}]`;
      return s;
    })
    .join('');
}

/** Every leaf path of a FieldsV1 set (a node owned as a whole is a leaf). */
export function fieldPaths(fields: FieldsV1, prefix: readonly string[] = []): string[][] {
  const out: string[][] = [];
  for (const [step, below] of Object.entries(fields)) {
    if (step === '.') {
      out.push([...prefix, '.']);
      continue;
    }
    const path = [...prefix, step];
    if (Object.keys(below).length === 0) out.push(path);
    else out.push(...fieldPaths(below, path));
  }
  return out;
}

/** The FieldsV1 set of some leaf paths. */
export function toFieldsV1(paths: Iterable<readonly string[]>): FieldsV1 {
  const root: FieldsV1 = {};
  for (const path of paths) {
    let node = root;
    for (const step of path) node = node[step] ??= {};
  }
  return root;
}
