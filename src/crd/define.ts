// One definition of a custom resource: its TypeBox schemas give the object type, the descriptor, the CRD and the validator.

import type { Static, TSchema } from 'typebox';
import type {
  CustomResourceColumnDefinition,
  CustomResourceDefinition,
  CustomResourceDefinitionVersion,
  JSONSchemaProps,
} from 'kubernetes-types/apiextensions/v1.js';
import type { ObjectMeta } from 'kubernetes-types/meta/v1.js';
import { InvalidObjectError } from '../core/errors.js';
import { InvalidOptionError, validateOptions } from '../core/options.js';
import type { ResourceDescriptor } from '../core/resources.js';
import { DNS_LABEL } from '../core/label-selector.js';
import { defaultPlural } from './plural.js';
import { toStructural, type StructuralSchema, type ValidationRule } from './schema.js';
import { checkSchemaDefaults } from './defaults.js';
import { fieldError, sortedJson, validateObject, type FieldError, type ValidationResult } from './validate.js';

/** One printer column (`kubectl get` output): `additionalPrinterColumns` of the version. */
export interface PrinterColumn {
  /** The column header: `Replicas`. */
  readonly name: string;
  /** The column type: `integer`, `number`, `string`, `boolean` or `date`. */
  readonly type: 'integer' | 'number' | 'string' | 'boolean' | 'date';
  /** A simple JSON path into the object: `.spec.replicas`. */
  readonly jsonPath: string;
  /** A format hint (`int32`, `name`, …). Default: none. */
  readonly format?: string;
  /** A description for `kubectl explain`-like tools. Default: none. */
  readonly description?: string;
  /** 0 is shown by default; higher priorities only with `-o wide`. Default 0. */
  readonly priority?: number;
}

/** The scale subresource (`kubectl scale`, the HorizontalPodAutoscaler): JSON paths of the replica counts. */
export interface ScaleSubresource {
  /** The desired replicas: `.spec.replicas`. */
  readonly specReplicasPath: string;
  /** The observed replicas: `.status.replicas`. */
  readonly statusReplicasPath: string;
  /** The label selector in string form (`.status.selector`). Default: none. */
  readonly labelSelectorPath?: string;
}

/** The subresources of a version. */
export interface Subresources {
  /** Serve `/status`: spec and status are written apart (`replaceStatus`). Default `false`. */
  readonly status?: boolean;
  /** Serve `/scale` with these replica paths. Default: not served. */
  readonly scale?: ScaleSubresource;
}

/** The shape of a version marked `storage: true` (what {@link StorageVersion} looks for). */
export interface StorageFlag {
  /** The version objects are stored in. */
  readonly storage: true;
}

/** One version of a custom resource: its schemas and what the server does with them. */
export interface VersionOptions {
  /** Whether the server serves this version. Default `true`. */
  readonly served?: boolean;
  /** Whether objects are stored in this version: exactly one version says `true` (a lone version is the storage version by default). */
  readonly storage?: boolean;
  /** Marks the version deprecated: clients get a warning header. Default `false`. */
  readonly deprecated?: boolean;
  /** The warning text of a deprecated version. Default: the server's. */
  readonly deprecationWarning?: string;
  /** The TypeBox schema of `spec`: required on every object. */
  readonly spec: TSchema;
  /** The TypeBox schema of `status`. Default: no status field. */
  readonly status?: TSchema;
  /** CEL rules on the whole object (`self.spec`, `self.metadata.name`). Default: none. */
  readonly validations?: readonly ValidationRule[];
  /** `kubectl get` columns. Default: the server's (name and age). */
  readonly printerColumns?: readonly PrinterColumn[];
  /** Subresources: `status: true` serves `/status` (spec and status are written apart); `scale` serves `/scale`. Default: none. */
  readonly subresources?: Subresources;
  /** JSON paths of string, integer or boolean fields a field selector may use (`.spec.color`). Default: none. */
  readonly selectableFields?: readonly string[];
}

/** The names of a custom resource. */
export interface CustomResourceNames {
  /** The kind, UpperCamelCase: `Widget`. */
  readonly kind: string;
  /** The plural resource name, lowercase: `widgets`. Default: controller-gen's plural of the kind, {@link defaultPlural} (`NetworkPolicy` → `networkpolicies`). */
  readonly plural?: string;
  /** The singular name, lowercase. Default: the kind lowercased. */
  readonly singular?: string;
  /** Short names for kubectl (`wd`). Default: none. */
  readonly shortNames?: readonly string[];
  /** Categories for `kubectl get <category>` (`all`). Default: none. */
  readonly categories?: readonly string[];
  /** The kind of a list. Default: the kind plus `List`. */
  readonly listKind?: string;
}

/** What {@link defineCustomResource} takes: the group, names, scope and versions. */
export interface CustomResourceOptions<V extends Readonly<Record<string, VersionOptions>>> {
  /** The API group, a DNS subdomain with at least one dot: `example.com`. */
  readonly group: string;
  /** The names. */
  readonly names: CustomResourceNames;
  /** `Namespaced` or `Cluster`. Default `Namespaced`. */
  readonly scope?: 'Namespaced' | 'Cluster';
  /** The versions by name (`v1`, `v1beta1`), each with its schemas. Listed in the CRD by Kubernetes' version priority. */
  readonly versions: V;
}

/** The object type of one custom resource version: `apiVersion`, `kind`, `metadata`, the typed `spec` and (when the version has one) `status`. */
export interface CustomObject<Spec, Status = never> {
  /** `<group>/<version>`. */
  apiVersion?: string;
  /** The kind. */
  kind?: string;
  /** Standard object metadata. */
  metadata?: ObjectMeta;
  /** The desired state (required by the generated schema). */
  spec: Spec;
  /** The observed state. */
  status?: Status;
}

/** The object type of a {@link VersionOptions}. */
export type VersionObject<O extends VersionOptions> = CustomObject<Static<O['spec']>, O['status'] extends TSchema ? Static<O['status']> : never>;

/** The name of the storage version of `V` (the one with `storage: true`; a lone version otherwise). */
export type StorageVersion<V extends Readonly<Record<string, VersionOptions>>> = [
  { [K in keyof V]: V[K] extends StorageFlag ? K : never }[keyof V],
] extends [never]
  ? keyof V
  : { [K in keyof V]: V[K] extends StorageFlag ? K : never }[keyof V];

/** The object type of a definition's storage version: `type Widget = ObjectOfDefinition<typeof widgets>`. */
export type ObjectOfDefinition<D> = D extends CustomResource<infer V> ? VersionObject<V[StorageVersion<V>]> : never;

/** A custom resource defined once: the CRD, a descriptor and a validator per version. */
export interface CustomResource<V extends Readonly<Record<string, VersionOptions>>> {
  /** The `CustomResourceDefinition` (apiextensions.k8s.io/v1), ready for `kubectl apply` or {@link ensureCustomResourceDefinitions}. */
  readonly crd: CustomResourceDefinition;
  /** The descriptor of the storage version, typed by its object type: `factory.forResource(widgets.descriptor)`. */
  readonly descriptor: ResourceDescriptor<VersionObject<V[StorageVersion<V>]>>;
  /** The descriptor of every version. */
  readonly descriptors: { readonly [K in keyof V]: ResourceDescriptor<VersionObject<V[K]>> };
  /** The structural schema of each version's object (as in the CRD). */
  readonly schemas: { readonly [K in keyof V]: StructuralSchema };
  /** The storage version's name. */
  readonly storageVersion: StorageVersion<V> & string;
  /**
   * Validates an object against a version's schema (default: the storage version) as the API server
   * does: every failing path at once, in the server's words; CEL rules are listed as `unchecked`.
   */
  validate(obj: unknown, version?: keyof V & string): ValidationResult;
  /**
   * The object with unknown fields pruned and the schema's defaults applied (a copy), as the server
   * would store it. Throws `InvalidObjectError` (`INVALID_OBJECT`) listing every failing path when the
   * result does not validate, so the returned type is true.
   */
  withDefaults<K extends keyof V & string = StorageVersion<V> & string>(obj: unknown, version?: K): VersionObject<V[K]>;
}

const VERSION_RE = /^v[1-9][0-9]*((alpha|beta)[1-9][0-9]*)?$/;
const KIND_RE = /^[A-Z][A-Za-z0-9]*$/;

const OWNER = 'defineCustomResource';

/** Kubernetes' version priority: GA before beta before alpha, higher numbers first, non-Kubernetes names last. */
function versionPriority(a: string, b: string): number {
  const parse = (v: string): [number, number, number] => {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (m === null) return [0, 0, 0];
    return [m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1, Number(m[1]), Number(m[3] ?? 0)];
  };
  const [pa, pb] = [parse(a), parse(b)];
  return pb[0] - pa[0] || pb[1] - pa[1] || pb[2] - pa[2] || a.localeCompare(b);
}

function rootSchema(name: string, v: VersionOptions): StructuralSchema {
  const path = `versions.${name}`;
  const properties: Record<string, StructuralSchema> = {
    apiVersion: { type: 'string' },
    kind: { type: 'string' },
    metadata: { type: 'object' },
    spec: toStructural(OWNER, `${path}.spec`, v.spec),
  };
  if (properties.spec.type !== 'object') throw new InvalidOptionError(`${OWNER}: ${path}.spec.type: must be object, got ${JSON.stringify(properties.spec.type)}`);
  if (v.status !== undefined) properties.status = toStructural(OWNER, `${path}.status`, v.status);
  const root: StructuralSchema = { type: 'object', required: ['spec'], properties };
  if (v.validations !== undefined && v.validations.length > 0) root['x-kubernetes-validations'] = v.validations.map((r) => ({ ...r }));
  return root;
}

/**
 * Refuses a version schema whose defaults kube-apiserver would refuse (see `checkSchemaDefaults`): the
 * message names the default by its option path and lists the server's own errors, with its paths
 * (`serverPath` is where the server keeps the schema).
 */
function checkDefaults(schema: StructuralSchema, name: string, serverPath: string): void {
  const errors = checkSchemaDefaults(schema, serverPath);
  if (errors.length === 0) return;
  const first = errors[0].field;
  const node = first.slice(0, first.indexOf('.default') + '.default'.length);
  const optionPath = `versions.${name}.schema${node.slice(serverPath.length).replace(/\[([^\]]*)\]/g, '.$1')}`;
  throw new InvalidOptionError(`${OWNER}: ${optionPath}: does not validate against its schema (kube-apiserver refuses the CRD): ${errors.map((e) => e.message).join('; ')}`);
}

/**
 * The names of a definition checked as `defineCustomResource` checks them (the group a DNS subdomain
 * with a dot, the kind UpperCamelCase, plural and singular DNS labels), with the defaults filled in;
 * throws `INVALID_OPTION` naming the option. `kube-informer init` checks its `--group` and `--kind` here.
 */
export function checkNames(options: Pick<CustomResourceOptions<Readonly<Record<string, VersionOptions>>>, 'group' | 'names'>): Required<Omit<CustomResourceNames, 'shortNames' | 'categories'>> & CustomResourceNames {
  const { group, names } = options;
  if (typeof group !== 'string' || !group.includes('.') || !group.split('.').every((l) => DNS_LABEL.test(l))) {
    throw new InvalidOptionError(`${OWNER}: group: must be a DNS subdomain with at least one dot (example.com), got ${JSON.stringify(group)}`);
  }
  if (!KIND_RE.test(names.kind)) throw new InvalidOptionError(`${OWNER}: names.kind: must be UpperCamelCase (Widget), got ${JSON.stringify(names.kind)}`);
  const full = {
    ...names,
    plural: names.plural ?? defaultPlural(names.kind),
    singular: names.singular ?? names.kind.toLowerCase(),
    listKind: names.listKind ?? `${names.kind}List`,
  };
  for (const key of ['plural', 'singular'] as const) {
    if (!DNS_LABEL.test(full[key])) throw new InvalidOptionError(`${OWNER}: names.${key}: must be a lowercase DNS label, got ${JSON.stringify(full[key])}`);
  }
  if (!KIND_RE.test(full.listKind)) throw new InvalidOptionError(`${OWNER}: names.listKind: must be UpperCamelCase, got ${JSON.stringify(full.listKind)}`);
  for (const key of ['shortNames', 'categories'] as const) {
    (names[key] ?? []).forEach((n, i) => {
      if (!DNS_LABEL.test(n)) throw new InvalidOptionError(`${OWNER}: names.${key}[${i}]: must be a lowercase DNS label, got ${JSON.stringify(n)}`);
    });
  }
  return full;
}

function versionEntry(name: string, v: VersionOptions, schema: StructuralSchema, storage: boolean): CustomResourceDefinitionVersion {
  const entry: CustomResourceDefinitionVersion = { name, served: v.served ?? true, storage, schema: { openAPIV3Schema: schema as JSONSchemaProps } };
  if (v.deprecated === true) entry.deprecated = true;
  if (v.deprecationWarning !== undefined) entry.deprecationWarning = v.deprecationWarning;
  if (v.printerColumns !== undefined) entry.additionalPrinterColumns = v.printerColumns.map((c): CustomResourceColumnDefinition => ({ ...c }));
  const sub = v.subresources;
  if (sub !== undefined && (sub.status === true || sub.scale !== undefined)) {
    entry.subresources = {};
    if (sub.status === true) entry.subresources.status = {};
    if (sub.scale !== undefined) entry.subresources.scale = { ...sub.scale };
  }
  if (v.selectableFields !== undefined) entry.selectableFields = v.selectableFields.map((jsonPath) => ({ jsonPath }));
  return entry;
}

function checkVersion(name: string, v: VersionOptions, schema: StructuralSchema): void {
  const path = `versions.${name}`;
  // The list-valued options are checked here (validateOptions has no array rule); the rest there.
  const { validations, printerColumns, selectableFields, ...plain } = v;
  validateOptions(`${OWNER} ${path}`, plain, {
    served: 'boolean', storage: 'boolean', deprecated: 'boolean', deprecationWarning: 'string', spec: 'object', status: 'object', subresources: 'object',
  });
  for (const [name, list] of Object.entries({ validations, printerColumns, selectableFields })) {
    if (list !== undefined && !Array.isArray(list)) throw new InvalidOptionError(`${OWNER}: ${path}.${name}: must be an array, got ${typeof list}`);
  }
  if (v.deprecationWarning !== undefined && v.deprecated !== true) throw new InvalidOptionError(`${OWNER}: ${path}.deprecationWarning: needs deprecated: true`);
  const fieldOf = (jsonPath: string): StructuralSchema | undefined => {
    let node: StructuralSchema | undefined = schema;
    for (const part of jsonPath.replace(/^\./, '').split('.')) node = node?.properties?.[part];
    return node;
  };
  (v.printerColumns ?? []).forEach((c, i) => {
    if (!c.jsonPath.startsWith('.')) throw new InvalidOptionError(`${OWNER}: ${path}.printerColumns[${i}].jsonPath: must start with a dot, got ${JSON.stringify(c.jsonPath)}`);
  });
  (v.selectableFields ?? []).forEach((jsonPath, i) => {
    const node = fieldOf(jsonPath);
    if (!jsonPath.startsWith('.') || node === undefined || !['string', 'integer', 'boolean'].includes(node.type ?? '')) {
      throw new InvalidOptionError(`${OWNER}: ${path}.selectableFields[${i}]: must be the JSON path of a string, integer or boolean field of the schema, got ${JSON.stringify(jsonPath)}`);
    }
  });
  const scale = v.subresources?.scale;
  if (scale !== undefined) {
    for (const key of ['specReplicasPath', 'statusReplicasPath'] as const) {
      const node = fieldOf(scale[key]);
      if (node?.type !== 'integer') throw new InvalidOptionError(`${OWNER}: ${path}.subresources.scale.${key}: must be the JSON path of an integer field, got ${JSON.stringify(scale[key])}`);
    }
  }
}

/** Go's `%v` of a JSON value in an unstructured object (`map[a:1]`, `[x y]`). */
function goFormat(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goFormat).join(' ')}]`;
  if (value === null) return '<nil>';
  if (typeof value === 'object') return `map[${Object.keys(value).sort().map((k) => `${k}:${goFormat((value as Record<string, unknown>)[k])}`).join(' ')}]`;
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** Go's name of a JSON value's type in an unstructured object. */
function goType(value: unknown): string {
  if (Array.isArray(value)) return '[]interface {}';
  if (value === null) return '<nil>';
  if (typeof value === 'object') return 'map[string]interface {}';
  if (typeof value === 'number') return Number.isInteger(value) ? 'int64' : 'float64';
  return typeof value === 'boolean' ? 'bool' : 'string';
}

/**
 * The errors of the scale subresource's replica paths: the server reads them as int64 on every write
 * and names the JSON path (`.spec.replicas: Invalid value: 0: .spec.replicas accessor error: …`).
 */
function scaleErrors(obj: unknown, scale: ScaleSubresource): FieldError[] {
  const errors: FieldError[] = [];
  for (const jsonPath of [scale.specReplicasPath, scale.statusReplicasPath]) {
    let node: unknown = obj;
    const parts = jsonPath.replace(/^\./, '').split('.');
    for (const [i, part] of parts.entries()) {
      if (node === undefined) break;
      const last = i === parts.length - 1;
      if (typeof node !== 'object' || node === null || Array.isArray(node)) {
        errors.push(fieldError(jsonPath, 'FieldValueInvalid', 0, `${jsonPath} accessor error: ${goFormat(node)} is of the type ${goType(node)}, expected map[string]interface{}`));
        break;
      }
      node = (node as Record<string, unknown>)[part];
      if (last && node !== undefined && goType(node) !== 'int64') {
        errors.push(fieldError(jsonPath, 'FieldValueInvalid', 0, `${jsonPath} accessor error: ${goFormat(node)} is of the type ${goType(node)}, expected int64`));
      }
    }
  }
  return errors;
}

/**
 * Defines a custom resource once, from TypeBox schemas of its `spec` and `status`: the result holds
 * the `CustomResourceDefinition`, a {@link ResourceDescriptor} typed by the object (for `forResource`,
 * `Controller.for`, `owns`, `newResourceClient`) and a validator with the server's field paths.
 *
 * The definition is checked now: a schema with no structural form, a `default` that does not
 * validate against its own schema, `storage: true` on zero or several versions, a kind that is not
 * UpperCamelCase, a version name that is not `v1`/`v1beta1`-like, an unknown selectable field or
 * scale path → {@link InvalidOptionError} (`INVALID_OPTION`) naming the path (`versions.v1.spec.properties.replicas.default`).
 *
 * @example
 * ```ts
 * import { Type, defineCustomResource, type ObjectOfDefinition } from 'kube-informer/crd';
 * export const widgets = defineCustomResource({
 *   group: 'example.com',
 *   names: { kind: 'Widget', shortNames: ['wd'] },
 *   versions: { v1: { storage: true, spec: Type.Object({ size: Type.Integer({ minimum: 1, default: 1 }) }) } },
 * });
 * export type Widget = ObjectOfDefinition<typeof widgets>; // { spec: { size: number }, ... }
 * factory.forResource(widgets.descriptor); // SharedIndexInformer<Widget>
 * ```
 */
export function defineCustomResource<const V extends Readonly<Record<string, VersionOptions>>>(options: CustomResourceOptions<V>): CustomResource<V> {
  validateOptions(OWNER, options, { group: 'string', names: 'object', scope: ['Namespaced', 'Cluster'], versions: 'object' });
  if (options === undefined || options.names === undefined || options.versions === undefined) throw new InvalidOptionError(`${OWNER}: group, names and versions are required`);
  const names = checkNames(options);
  const versionNames = Object.keys(options.versions).sort(versionPriority);
  if (versionNames.length === 0) throw new InvalidOptionError(`${OWNER}: versions: at least one version is required`);
  for (const name of versionNames) {
    if (!VERSION_RE.test(name)) throw new InvalidOptionError(`${OWNER}: versions.${name}: a version name is v<N>, v<N>alpha<M> or v<N>beta<M>`);
  }
  const storageNames = versionNames.filter((n) => options.versions[n].storage === true);
  if (storageNames.length > 1) throw new InvalidOptionError(`${OWNER}: versions: storage: true on ${storageNames.length} versions (${storageNames.join(', ')}); exactly one version is stored`);
  if (storageNames.length === 0 && versionNames.length > 1) throw new InvalidOptionError(`${OWNER}: versions: storage: true on no version; exactly one version is stored`);
  const storageVersion = storageNames[0] ?? versionNames[0];
  const schemas: Record<string, StructuralSchema> = {};
  const entries: CustomResourceDefinitionVersion[] = [];
  for (const name of versionNames) {
    const v = options.versions[name];
    if (v === null || typeof v !== 'object' || v.spec === undefined) throw new InvalidOptionError(`${OWNER}: versions.${name}.spec: a spec schema is required`);
    const schema = rootSchema(name, v);
    checkVersion(name, v, schema);
    schemas[name] = schema;
    entries.push(versionEntry(name, v, schema, name === storageVersion));
  }
  // The server keeps a schema that every version shares once, as spec.validation, and names its errors there.
  const shared = versionNames.every((n) => sortedJson(schemas[n]) === sortedJson(schemas[versionNames[0]]));
  for (const [index, name] of versionNames.entries()) {
    checkDefaults(schemas[name], name, shared ? 'spec.validation.openAPIV3Schema' : `spec.versions[${index}].schema.openAPIV3Schema`);
    if (shared) break;
  }
  if (!entries.some((e) => e.served)) throw new InvalidOptionError(`${OWNER}: versions: no version is served`);
  const namespaced = (options.scope ?? 'Namespaced') === 'Namespaced';
  const crdNames: CustomResourceDefinition['spec']['names'] = { kind: names.kind, listKind: names.listKind, plural: names.plural, singular: names.singular };
  if (names.shortNames !== undefined) crdNames.shortNames = [...names.shortNames];
  if (names.categories !== undefined) crdNames.categories = [...names.categories];
  const crd: CustomResourceDefinition = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${names.plural}.${options.group}` },
    spec: { group: options.group, names: crdNames, scope: namespaced ? 'Namespaced' : 'Cluster', versions: entries },
  };
  const descriptors = Object.fromEntries(
    versionNames.map((n) => [n, Object.freeze({ group: options.group, version: n, resource: names.plural, kind: names.kind, namespaced })]),
  );
  const pick = (version: string | undefined): StructuralSchema => {
    const schema = schemas[version ?? storageVersion];
    if (schema === undefined) throw new InvalidOptionError(`${OWNER}: ${names.kind} has no version ${JSON.stringify(version)} (versions: ${versionNames.join(', ')})`);
    return schema;
  };
  const check = (obj: unknown, version: string | undefined): ValidationResult => {
    const result = validateObject(pick(version), obj);
    const scale = options.versions[version ?? storageVersion].subresources?.scale;
    if (scale === undefined) return result;
    const errors = [...result.errors, ...scaleErrors(result.object, scale)];
    return { ...result, errors, valid: errors.length === 0 };
  };
  return Object.freeze({
    crd,
    descriptor: descriptors[storageVersion],
    descriptors,
    schemas,
    storageVersion,
    validate: (obj: unknown, version?: string) => check(obj, version),
    withDefaults: (obj: unknown, version?: string) => {
      const result = check(obj, version);
      if (!result.valid) throw new InvalidObjectError(`${names.kind} is invalid: [${result.errors.map((e) => e.message).join(', ')}]`);
      return result.object;
    },
  }) as unknown as CustomResource<V>;
}
