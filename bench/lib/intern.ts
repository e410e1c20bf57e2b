// Issue 29's memory experiment: a transform that stores repeated string values once, with a bounded table.
//
// Not shipped in src/ unless bench/intern.bench.ts shows it pays (≥ 15 % heap per full pod at ≤ 5 % CPU per
// event); it lives here so the measurement can be re-run. What it does: it walks a freshly decoded object
// and replaces each string value that is already in its table by the table's copy, so equal values share
// one string on the heap. Objects stay plain JSON (same properties, same values: a string is compared by
// content, so replacing it by an equal one changes nothing `===`, `JSON.stringify` or `deepEqual` can
// see); it writes in place, which is safe on an object nobody else has seen yet (the informer's
// `transform` runs before anyone does) but would throw on a frozen one.
//
// What it leaves alone:
// - strings of at most 10 characters: V8's JSON.parse (Node 20, V8 11.3) already internalizes string
//   values that short (measured with %DebugPrint: `"node-199"` comes out of JSON.parse as an internalized
//   string, `"xxxxxxxxxxy"` (11) as a fresh one), so equal short values already share one string;
// - strings longer than `maxLength` (a digest, a certificate, a last-applied configuration: rarely
//   repeated, and the lookup hashes the whole string);
// - the values under `skipKeys` (by property name, at any depth): values unique per object (`uid`,
//   `resourceVersion`, `containerID`), and `fieldsV1` (managedFields' field sets: property names only,
//   which V8 already shares).
//
// The table is bounded: two generations of at most `capacity` entries each. A value is looked up in the
// young generation, then in the old one (a hit there is copied into the young one); a miss adds it to the
// young one. When the young generation is full it becomes the old one and the previous old one is dropped
// — so at most 2 × `capacity` strings are held, values still in use move forward every generation, and
// unique values (names, IPs) pass through and are dropped two generations later: no leak, whatever the
// objects hold.

/** Options of {@link internStrings}. */
export interface InternStringsOptions {
  /** Longest string value looked up, in UTF-16 code units. Default 128. */
  maxLength?: number;
  /** Entries per generation of the table (it holds at most twice as many). Default 16 384. */
  capacity?: number;
  /** Property names whose values (and subtrees) are never looked up. Default {@link DEFAULT_SKIP_KEYS}. */
  skipKeys?: readonly string[];
  /**
   * Look up only the values at these paths instead of walking the whole object: dot-separated property
   * names, `[]` for every element of an array (`'spec.containers[].image'`); a path ending at an object
   * looks up that object's own string values (`'metadata.labels'`). `skipKeys` does not apply. Default:
   * none (walk everything).
   */
  paths?: readonly string[];
  /**
   * `'v8'`: no table of our own — each value is used as a key of a scratch dictionary object (stored, then
   * deleted), which makes V8 internalize it in place: an equal string already in V8's string table turns it
   * into a forwarding string, which the next GC replaces by the shared one. V8's table is weak, so nothing
   * is held; the behaviour is V8's, not a language guarantee. Default `'map'` (the two-generation table).
   */
  table?: 'map' | 'v8';
}

/** The few paths of a pod that hold most of its repeated bytes (images and their digests, conditions): fewer lookups. */
export const POD_TOP_PATHS: readonly string[] = [
  'spec.nodeName', 'spec.containers[].image', 'status.containerStatuses[].image', 'status.containerStatuses[].imageID',
  'status.conditions[].type', 'status.conditions[].lastTransitionTime',
];

/** The paths of a pod whose values repeat across replicas, nodes and namespaces (bench/intern.bench.ts's `intern-paths`). */
export const POD_PATHS: readonly string[] = [
  'metadata.namespace', 'metadata.generateName', 'metadata.creationTimestamp', 'metadata.labels', 'metadata.annotations',
  'metadata.ownerReferences[].name', 'metadata.managedFields[].manager', 'metadata.managedFields[].time',
  'spec.nodeName', 'spec.schedulerName', 'spec.preemptionPolicy', 'spec.dnsPolicy', 'spec.tolerations[].key',
  'spec.containers[].image', 'spec.containers[].imagePullPolicy', 'spec.containers[].terminationMessagePath',
  'spec.containers[].volumeMounts[].mountPath', 'spec.containers[].volumeMounts[].name', 'spec.volumes[].name',
  'status.startTime', 'status.hostIP', 'status.conditions[].type', 'status.conditions[].lastTransitionTime',
  'status.containerStatuses[].image', 'status.containerStatuses[].imageID', 'status.containerStatuses[].state.running.startedAt',
];

/** Values unique per object, and managedFields' field sets (names only). */
export const DEFAULT_SKIP_KEYS: readonly string[] = ['uid', 'resourceVersion', 'containerID', 'fieldsV1'];

/** V8 already internalizes JSON.parse string values up to this length (see the file's comment). */
const V8_INTERNALIZED_LENGTH = 10;

/** The transform, with its table's size for tests and the benchmark. */
export interface InternTransform {
  <T>(obj: T): T;
  /** Strings the table holds now (both generations). */
  size(): number;
  /** Lookups and hits since creation. */
  stats(): { lookups: number; hits: number };
}

/** Makes a transform that shares repeated string values through one bounded table (see the file's comment). */
export function internStrings(options: InternStringsOptions = {}): InternTransform {
  const maxLength = options.maxLength ?? 128;
  const capacity = options.capacity ?? 16_384;
  const skip = new Set(options.skipKeys ?? DEFAULT_SKIP_KEYS);
  let young = new Map<string, string>();
  let old = new Map<string, string>();
  let lookups = 0;
  let hits = 0;

  let canonical = (s: string): string => {
    lookups++;
    let c = young.get(s);
    if (c !== undefined) {
      hits++;
      return c;
    }
    c = old.get(s);
    if (c !== undefined) hits++;
    else c = s;
    young.set(c, c);
    if (young.size >= capacity) {
      old = young;
      young = new Map();
    }
    return c;
  };

  if (options.table === 'v8') {
    const scratch = Object.create(null) as Record<string, number>;
    canonical = (s: string): string => {
      lookups++;
      scratch[s] = 0;
      delete scratch[s];
      return s;
    };
  }

  const worth = (v: string): boolean => v.length > V8_INTERNALIZED_LENGTH && v.length <= maxLength;

  const walk = (node: object): void => {
    if (Array.isArray(node)) {
      const arr = node as unknown[];
      for (let i = 0; i < arr.length; i++) {
        const v = arr[i];
        if (typeof v === 'string') {
          if (worth(v)) arr[i] = canonical(v);
        } else if (typeof v === 'object' && v !== null) walk(v);
      }
      return;
    }
    const rec = node as Record<string, unknown>;
    for (const k in rec) {
      if (skip.has(k)) continue;
      const v = rec[k];
      if (typeof v === 'string') {
        if (worth(v)) rec[k] = canonical(v);
      } else if (typeof v === 'object' && v !== null) walk(v);
    }
  };

  // `paths`: one visit per path, its segments parsed once.
  const compiled = options.paths?.map((p) => p.split('.').map((seg) => (seg.endsWith('[]') ? { key: seg.slice(0, -2), each: true } : { key: seg, each: false })));
  type Segment = { key: string; each: boolean };
  const visit = (node: unknown, path: Segment[], at: number): void => {
    if (typeof node !== 'object' || node === null) return;
    const rec = node as Record<string, unknown>;
    if (at === path.length) {
      for (const k in rec) {
        const v = rec[k];
        if (typeof v === 'string' && worth(v)) rec[k] = canonical(v);
      }
      return;
    }
    const { key, each } = path[at];
    const v = rec[key];
    if (each) {
      if (Array.isArray(v)) for (const el of v as unknown[]) visit(el, path, at + 1);
    } else if (typeof v === 'string') {
      if (at === path.length - 1 && worth(v)) rec[key] = canonical(v);
    } else visit(v, path, at + 1);
  };

  const transform = (<T>(obj: T): T => {
    if (typeof obj !== 'object' || obj === null) return obj;
    if (compiled === undefined) walk(obj);
    else for (const p of compiled) visit(obj, p, 0);
    return obj;
  }) as InternTransform;
  transform.size = () => young.size + old.size;
  transform.stats = () => ({ lookups, hits });
  return transform;
}
