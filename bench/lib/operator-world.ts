// The operator phase's world on a real kube-apiserver: the bench CRD, a namespace of BenchSets, the reset between sides, a watch that counts ready sets, and the steady spec writer.
//
// All plain HTTPS (bench/lib/real-http.ts), never a Kubernetes client library, in the parent process.
// A set is ready when status.observedGeneration equals metadata.generation and status.ready equals
// spec.children — what the reconcile writes once every ConfigMap of that generation is in place.

import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { BENCH_GROUP, BENCH_PLURAL, BENCH_VERSION, epochMs, type BenchSet } from './operator-side.js';
import { send, serverAccess, stream, type ServerAccess } from './real-http.js';

/** One spec write of the steady writer: the set, the generation the server answered, and when (epoch ms). */
export interface SpecWrite {
  key: string;
  generation: number;
  at: number;
}

/** A watch of the namespace's BenchSets that knows how many are ready. */
export interface ReadyWatch {
  /**
   * Resolves with the time (epoch ms) the ready count first reaches `n` after this call, and this watch
   * has seen every set of `writes` at its written generation or later. Without `writes`, a set whose
   * spec change the watch has not yet seen would still count as ready at its old generation.
   */
  allReady(timeoutMs: number, writes?: readonly SpecWrite[]): Promise<number>;
  /** Ready sets now. */
  ready(): number;
  close(): void;
}

const crdPath = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The namespace's BenchSets and ConfigMaps on one server. */
export class OperatorWorld {
  readonly #access: ServerAccess;
  readonly #agent: http.Agent;
  readonly namespace: string;
  readonly children: number;
  readonly #concurrency: number;

  private constructor(access: ServerAccess, namespace: string, children: number, concurrency: number) {
    this.#access = access;
    this.#agent = new (access.server.startsWith('http:') ? http : https).Agent({ keepAlive: true, maxSockets: concurrency });
    this.namespace = namespace;
    this.children = children;
    this.#concurrency = concurrency;
  }

  /** Connects to the server of `kubeconfig`; `concurrency` requests in flight for the bulk writes. */
  static async open(kubeconfig: string, namespace: string, children: number, concurrency: number): Promise<OperatorWorld> {
    return new OperatorWorld(await serverAccess(kubeconfig), namespace, children, concurrency);
  }

  get #setsPath(): string {
    return `/apis/${BENCH_GROUP}/${BENCH_VERSION}/namespaces/${this.namespace}/${BENCH_PLURAL}`;
  }

  async #ok(method: string, path: string, body?: unknown, contentType?: string, allowed: number[] = []): Promise<Buffer> {
    const reply = await send(this.#access, this.#agent, method, path, body, contentType);
    if (reply.status >= 300 && !allowed.includes(reply.status)) throw new Error(`${method} ${path}: HTTP ${reply.status} ${reply.body.toString().slice(0, 300)}`);
    return reply.body;
  }

  /** kube-apiserver's gitVersion. */
  async version(): Promise<string> {
    return (JSON.parse((await this.#ok('GET', '/version')).toString()) as { gitVersion: string }).gitVersion;
  }

  /** Installs the CRD (namespaced, status subresource; kept across runs) and creates the namespace; resolves once the resource is served. */
  async setup(): Promise<void> {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${BENCH_PLURAL}.${BENCH_GROUP}` },
      spec: {
        group: BENCH_GROUP,
        scope: 'Namespaced',
        names: { plural: BENCH_PLURAL, singular: 'benchset', kind: 'BenchSet', listKind: 'BenchSetList' },
        versions: [{
          name: BENCH_VERSION, served: true, storage: true, subresources: { status: {} },
          schema: { openAPIV3Schema: { type: 'object', properties: {
            spec: { type: 'object', properties: { children: { type: 'integer' }, data: { type: 'object', additionalProperties: { type: 'string' } } } },
            status: { type: 'object', properties: { observedGeneration: { type: 'integer', format: 'int64' }, ready: { type: 'integer' } } },
          } } },
        }],
      },
    };
    await this.#ok('POST', crdPath, crd, undefined, [409]);
    await this.#ok('POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: this.namespace } }, undefined, [409]);
    for (let i = 0; ; i++) {
      const reply = await send(this.#access, this.#agent, 'GET', `${this.#setsPath}?limit=1`);
      if (reply.status === 200) return;
      if (i > 300) throw new Error(`the BenchSet CRD is not served after 30 s (HTTP ${reply.status})`);
      await sleep(100);
    }
  }

  /** Deletes every ConfigMap and BenchSet of the namespace (DELETE on the collections; no garbage collector runs on a bare apiserver) and waits until none is listed. */
  async clear(): Promise<void> {
    for (const path of [`/api/v1/namespaces/${this.namespace}/configmaps`, this.#setsPath]) {
      for (let round = 0; ; round++) {
        const left = JSON.parse((await this.#ok('GET', `${path}?limit=1`)).toString()) as { items: unknown[] };
        if (left.items.length === 0) break;
        if (round > 600) throw new Error(`${path}: objects left after 600 collection deletes`);
        if (round % 20 === 0) await this.#ok('DELETE', `${path}?gracePeriodSeconds=0`, undefined, undefined, [404]);
        await sleep(100);
      }
    }
  }

  /** Clears the namespace, then creates `n` BenchSets `set-<i>` (no status, generation 1), `concurrency` at a time; resolves with the seconds it took. */
  async reset(n: number): Promise<number> {
    const t0 = performance.now();
    await this.clear();
    let next = 0;
    const one = async (): Promise<void> => {
      while (next < n) {
        const i = next++;
        await this.create(`set-${i}`, String(i));
      }
    };
    await Promise.all(Array.from({ length: this.#concurrency }, one));
    return (performance.now() - t0) / 1000;
  }

  /** Creates BenchSet `name` (no status, generation 1; `index` in its data, `annotations` on it); resolves with the server's answer. */
  async create(name: string, index: string, annotations?: Record<string, string>): Promise<BenchSet> {
    const set = { apiVersion: `${BENCH_GROUP}/${BENCH_VERSION}`, kind: 'BenchSet', metadata: { name, ...(annotations === undefined ? {} : { annotations }) }, spec: { children: this.children, data: { value: 'v1', index } } };
    return JSON.parse((await this.#ok('POST', this.#setsPath, set)).toString()) as BenchSet;
  }

  /** Lists the BenchSets and watches them from there; resolves once the list is in. */
  async watchReady(n: number): Promise<ReadyWatch> {
    const isReady = (s: BenchSet): boolean => s.status?.observedGeneration === s.metadata.generation && s.status?.ready === s.spec.children;
    const state = new Map<string, boolean>();
    /** The generation this watch last saw of each set, by name. */
    const seen = new Map<string, number>();
    let count = 0;
    /** Each returns true once it settled its promise. */
    let waiters: Array<() => boolean> = [];
    const apply = (s: BenchSet, gone: boolean): void => {
      const key = s.metadata.name;
      const was = state.get(key) ?? false;
      const now = !gone && isReady(s);
      if (gone) state.delete(key);
      else state.set(key, now);
      seen.set(key, s.metadata.generation);
      count += Number(now) - Number(was);
      if (count >= n && waiters.length > 0) waiters = waiters.filter((w) => !w());
    };
    const list = JSON.parse((await this.#ok('GET', this.#setsPath)).toString()) as { metadata: { resourceVersion: string }; items: BenchSet[] };
    for (const s of list.items) apply(s, false);
    let closed = false;
    let res: http.IncomingMessage | undefined;
    const watch = async (rv: string): Promise<void> => {
      // One watch connection (no agent: not taken from the bulk writes' pool), re-opened from the last version if the server ends it.
      while (!closed) {
        res = await stream(this.#access, undefined, `${this.#setsPath}?watch=1&allowWatchBookmarks=true&resourceVersion=${rv}`, 'application/json');
        for await (const line of createInterface({ input: res })) {
          if (line.length === 0) continue;
          const ev = JSON.parse(line) as { type: string; object: BenchSet };
          rv = ev.object.metadata.resourceVersion ?? rv;
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') apply(ev.object, ev.type === 'DELETED');
        }
      }
    };
    void watch(list.metadata.resourceVersion).catch((err: unknown) => {
      if (!closed) process.stderr.write(`operator phase: the ready watch failed: ${err instanceof Error ? err.message : String(err)}\n`);
    });
    return {
      ready: () => count,
      allReady: (timeoutMs, writes = []) =>
        new Promise<number>((resolve, reject) => {
          const written = writes.map((w) => [w.key.slice(w.key.indexOf('/') + 1), w.generation] as const);
          const unseen = (): number => written.filter(([name, generation]) => (seen.get(name) ?? 0) < generation).length;
          if (count >= n && unseen() === 0) return resolve(epochMs());
          const timer = setTimeout(() => reject(new Error(`${count} of ${n} BenchSets ready, ${unseen()} of ${written.length} spec changes not yet seen, after ${timeoutMs / 1000} s`)), timeoutMs);
          waiters.push(() => {
            if (unseen() > 0) return false;
            clearTimeout(timer);
            resolve(epochMs());
            return true;
          });
        }),
      close: () => {
        closed = true;
        res?.destroy();
      },
    };
  }

  /**
   * Changes `spec.data.value` of BenchSets at `rate` per second for `seconds` (open loop: on schedule,
   * whatever the answers), each write a JSON merge patch of a different set (`set-<(w·7919) mod n>`, the
   * multiplier prime, so consecutive writes are far apart); resolves with every answered write.
   */
  async steadyWrites(n: number, rate: number, seconds: number): Promise<SpecWrite[]> {
    const total = Math.round(rate * seconds);
    const writes: SpecWrite[] = [];
    const pending: Array<Promise<void>> = [];
    const t0 = performance.now();
    for (let w = 0; w < total; w++) {
      const due = t0 + (w * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      const name = `set-${(w * 7919) % n}`;
      pending.push(
        this.#ok('PATCH', `${this.#setsPath}/${name}`, { spec: { data: { value: `w${w}` } } }, 'application/merge-patch+json').then((body) => {
          const at = epochMs();
          const obj = JSON.parse(body.toString()) as BenchSet;
          writes.push({ key: `${this.namespace}/${name}`, generation: obj.metadata.generation, at });
        }),
      );
    }
    await Promise.all(pending);
    return writes;
  }

  /** Deletes the namespace's objects, then the namespace (the CRD stays: other runs reuse it). */
  async cleanup(): Promise<void> {
    await this.clear();
    await this.#ok('DELETE', `/api/v1/namespaces/${this.namespace}`, undefined, undefined, [404]);
    this.#agent.destroy();
  }
}
