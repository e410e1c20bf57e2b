// The differential suite's normaliser: replaces what legitimately differs between two servers (uids, times, resourceVersion values, generated names) by stable labels, keeping the order of resource versions checkable.

/** A normalised answer: what is compared between the servers. */
export interface Normalised {
  status: number;
  contentType: string;
  body: unknown;
}

const TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * One per server and run. A uid becomes `uid(<name>)#n` (the n-th uid seen for that name), a
 * resourceVersion `rv(<name>)#n` (the n-th version seen of that object), a list's or bookmark's
 * version `<list-rv>` / `<bookmark-rv>` (checked to be no older than the items it answers), a name
 * from `generateName` `<prefix>*n`, a timestamp `<time>`, a continue token `<continue>`. The raw
 * value behind every rv label is kept, so {@link orderDifferences} can check that both servers put
 * the labels in the same order.
 */
export class Normaliser {
  /** rv label → the server's value. */
  readonly versions = new Map<string, bigint>();
  /** Lists whose resourceVersion was older than one of their items (must stay empty). */
  readonly staleLists: string[] = [];
  #rvLabel = new Map<string, string>();
  #uidLabel = new Map<string, string>();
  #generated = new Map<string, string>();
  #perName = new Map<string, number>();

  /** Normalises one answer. */
  answer(a: { status: number; contentType: string; body: unknown }): Normalised {
    return { status: a.status, contentType: a.contentType, body: this.body(a.body) };
  }

  /** Normalises a body: an object, a list, a Status, an array of watch events, or text. */
  body(body: unknown): unknown {
    if (Array.isArray(body)) return body.map((e) => this.#event(e));
    if (!isRecord(body)) return body;
    if (Array.isArray(body.items)) return this.#list(body);
    if (body.kind === 'Status') return this.#status(body);
    return this.#object(body);
  }

  #event(e: unknown): unknown {
    if (!isRecord(e) || !isRecord(e.object)) return e;
    if (e.type === 'BOOKMARK') {
      const object = structuredClone(e.object);
      if (isRecord(object.metadata) && typeof object.metadata.resourceVersion === 'string') object.metadata.resourceVersion = '<bookmark-rv>';
      return { ...e, object };
    }
    return { ...e, object: e.type === 'ERROR' ? this.#status(e.object) : this.#object(e.object) };
  }

  #list(list: Record<string, unknown>): unknown {
    const items = (list.items as unknown[]).map((i) => this.#object(i));
    const metadata = isRecord(list.metadata) ? { ...list.metadata } : list.metadata;
    if (isRecord(metadata)) {
      if (typeof metadata.resourceVersion === 'string' && metadata.resourceVersion !== '') {
        const listRv = BigInt(metadata.resourceVersion);
        for (const raw of list.items as Array<{ metadata?: { name?: string; resourceVersion?: string } }>) {
          const rv = raw.metadata?.resourceVersion;
          if (rv !== undefined && BigInt(rv) > listRv) this.staleLists.push(`list at ${listRv} holds ${raw.metadata?.name} at ${rv}`);
        }
        metadata.resourceVersion = '<list-rv>';
      }
      if (typeof metadata.continue === 'string' && metadata.continue !== '') metadata.continue = '<continue>';
    }
    return { ...list, metadata, items };
  }

  #status(status: Record<string, unknown>): unknown {
    const out = structuredClone(status);
    if (isRecord(out.details)) {
      const name = typeof out.details.name === 'string' ? out.details.name : '?';
      if (typeof out.details.uid === 'string') out.details.uid = this.#uid(out.details.uid, name);
      if (this.#generated.has(name)) out.details.name = this.#generated.get(name);
    }
    if (typeof out.message === 'string') out.message = this.#message(out.message);
    return out;
  }

  #object(obj: unknown): unknown {
    if (!isRecord(obj)) return obj;
    const out = this.#times(structuredClone(obj)) as Record<string, unknown>;
    const meta = out.metadata;
    if (!isRecord(meta)) return out;
    if (typeof meta.name === 'string' && typeof meta.generateName === 'string' && meta.name.startsWith(meta.generateName)) {
      meta.name = this.#generatedName(meta.name, meta.generateName);
    }
    const name = `${typeof meta.namespace === 'string' ? `${meta.namespace}/` : ''}${String(meta.name)}`;
    if (typeof meta.uid === 'string') meta.uid = this.#uid(meta.uid, name);
    if (typeof meta.resourceVersion === 'string' && /^\d+$/.test(meta.resourceVersion)) meta.resourceVersion = this.#rv(meta.resourceVersion, name);
    for (const ref of Array.isArray(meta.ownerReferences) ? meta.ownerReferences : []) {
      if (isRecord(ref) && typeof ref.uid === 'string') ref.uid = this.#uid(ref.uid, String(ref.name));
    }
    return out;
  }

  #times(value: unknown): unknown {
    if (typeof value === 'string') return TIME.test(value) ? '<time>' : value;
    if (Array.isArray(value)) return value.map((v) => this.#times(v));
    if (!isRecord(value)) return value;
    for (const [k, v] of Object.entries(value)) value[k] = this.#times(v);
    return value;
  }

  #message(message: string): string {
    let out = message;
    for (const [raw, label] of this.#generated) out = out.split(raw).join(label);
    for (const [raw, label] of this.#uidLabel) out = out.split(raw).join(label);
    // A number after a dash is part of a name (the scenario's namespace `diff-1a2b-11`), never a resourceVersion.
    return out.replace(/(?<!-)\b\d{2,}\b/g, (n) => this.#rvLabel.get(n) ?? n);
  }

  #generatedName(name: string, prefix: string): string {
    let label = this.#generated.get(name);
    if (label === undefined) {
      const n = this.#next(`gen:${prefix}`);
      label = `${prefix}*${n}`;
      this.#generated.set(name, label);
    }
    return label;
  }

  #uid(uid: string, name: string): string {
    let label = this.#uidLabel.get(uid);
    if (label === undefined) {
      label = `uid(${name})#${this.#next(`uid:${name}`)}`;
      this.#uidLabel.set(uid, label);
    }
    return label;
  }

  #rv(rv: string, name: string): string {
    let label = this.#rvLabel.get(rv);
    if (label === undefined) {
      label = `rv(${name})#${this.#next(`rv:${name}`)}`;
      this.#rvLabel.set(rv, label);
      this.versions.set(label, BigInt(rv));
    }
    return label;
  }

  #next(key: string): number {
    const n = (this.#perName.get(key) ?? 0) + 1;
    this.#perName.set(key, n);
    return n;
  }
}

/**
 * The rv labels both servers know, sorted by each server's values: where the two orders part, the
 * first pair of labels that one server orders one way and the other the other way.
 */
export function orderDifferences(a: Normaliser, b: Normaliser): string[] {
  const common = [...a.versions.keys()].filter((label) => b.versions.has(label));
  const byA = [...common].sort((x, y) => cmp(a.versions.get(x)!, a.versions.get(y)!));
  const byB = [...common].sort((x, y) => cmp(b.versions.get(x)!, b.versions.get(y)!));
  const out: string[] = [];
  for (let i = 0; i < byA.length; i++) if (byA[i] !== byB[i]) out.push(`position ${i}: ${byA[i]} on one, ${byB[i]} on the other`);
  return out.slice(0, 5);
}

function cmp(x: bigint, y: bigint): number {
  return x < y ? -1 : x > y ? 1 : 0;
}

function isRecord(v: unknown): v is Record<string, any> {  
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
