// The "external system" of the ConfigMapSet operator: a registry outside Kubernetes (a JSON file, or a directory of them) that must be cleaned up.
//
// Not run on its own: the operator writes a record per set while the set lives and removes it in its
// finalizer's cleanup. Nothing in Kubernetes garbage-collects it: forget the cleanup and it leaks.

import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** What the registry keeps about one set. */
export interface RegistryRecord {
  /** The set's namespace. */
  namespace: string;
  /** The set's name. */
  name: string;
  /** The set's uid (a set deleted and created again under the same name is another set). */
  uid: string;
  /** The ConfigMaps the set asks for, in spec order. */
  configMaps: string[];
}

/**
 * Something outside Kubernetes that the operator keeps in step with the sets: a DNS zone, a bucket, a
 * row in a database. Keys are `namespace/name`. Each call honours its signal (rejects with the
 * abort reason when it aborts first).
 */
export interface ExternalRegistry {
  /** The record of `key`, or `undefined`. */
  get(key: string, signal?: AbortSignal): Promise<RegistryRecord | undefined>;
  /** Writes the record of `key` (creates or replaces it). */
  put(key: string, record: RegistryRecord, signal?: AbortSignal): Promise<void>;
  /** Removes the record of `key`; nothing happens when there is none. */
  remove(key: string, signal?: AbortSignal): Promise<void>;
  /** Every record, by key. */
  all(signal?: AbortSignal): Promise<Record<string, RegistryRecord>>;
}

/**
 * An {@link ExternalRegistry} in one JSON file. Writes go to a temporary file that is then renamed
 * over the old one, so a reader (or a crash) never sees half a file; calls run one at a time in the
 * order they were made, so concurrent reconciles cannot lose each other's records.
 */
export class FileRegistry implements ExternalRegistry {
  /** The JSON file. */
  readonly path: string;
  #queue: Promise<unknown> = Promise.resolve();
  #writes = 0;

  /** A registry kept in `path` (created on the first write; a missing file is an empty registry). */
  constructor(path: string) {
    this.path = path;
  }

  /** A registry in a new temporary directory; `dispose()` removes the directory. */
  static async temporary(): Promise<FileRegistry & { dispose(): Promise<void> }> {
    const dir = await mkdtemp(join(tmpdir(), 'configmapset-registry-'));
    const registry = new FileRegistry(join(dir, 'registry.json')) as FileRegistry & { dispose(): Promise<void> };
    registry.dispose = () => rm(dir, { recursive: true, force: true });
    return registry;
  }

  get(key: string, signal?: AbortSignal): Promise<RegistryRecord | undefined> {
    return this.#serial(signal, async () => (await this.#read())[key]);
  }

  put(key: string, record: RegistryRecord, signal?: AbortSignal): Promise<void> {
    return this.#serial(signal, async () => {
      const records = await this.#read();
      records[key] = { ...record, configMaps: [...record.configMaps] };
      await this.#write(records, signal);
    });
  }

  remove(key: string, signal?: AbortSignal): Promise<void> {
    return this.#serial(signal, async () => {
      const records = await this.#read();
      if (!(key in records)) return;
      delete records[key];
      await this.#write(records, signal);
    });
  }

  all(signal?: AbortSignal): Promise<Record<string, RegistryRecord>> {
    return this.#serial(signal, () => this.#read());
  }

  /** Runs `op` after every call made before it (whatever their outcome). */
  #serial<R>(signal: AbortSignal | undefined, op: () => Promise<R>): Promise<R> {
    const run = this.#queue.then(() => {
      signal?.throwIfAborted();
      return op();
    });
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #read(): Promise<Record<string, RegistryRecord>> {
    try {
      return JSON.parse(await readFile(this.path, 'utf8')) as Record<string, RegistryRecord>;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw err;
    }
  }

  async #write(records: Record<string, RegistryRecord>, signal: AbortSignal | undefined): Promise<void> {
    const temp = `${this.path}.${process.pid}.${++this.#writes}.tmp`;
    await writeFile(temp, `${JSON.stringify(records, null, 2)}\n`, { signal });
    await rename(temp, this.path);
  }
}

/**
 * An {@link ExternalRegistry} with one JSON file per record in a directory, for replicas of a sharded
 * operator in separate processes. They need no lock between them: a record belongs to one set, and the
 * shard ring lets one replica at a time reconcile a set — the guarantee this registry leans on (a
 * second writer of one record would be the ring's bug, and the ownership log of the sharded test
 * would show it). A write goes to a temporary file renamed over the record.
 */
export class DirectoryRegistry implements ExternalRegistry {
  /** The directory (created on the first write; a missing directory is an empty registry). */
  readonly dir: string;
  #writes = 0;

  constructor(dir: string) {
    this.dir = dir;
  }

  async get(key: string, signal?: AbortSignal): Promise<RegistryRecord | undefined> {
    return readRecord(this.#path(key), signal);
  }

  async put(key: string, record: RegistryRecord, signal?: AbortSignal): Promise<void> {
    await mkdir(this.dir, { recursive: true });
    const temp = `${this.#path(key)}.${process.pid}.${++this.#writes}.tmp`;
    await writeFile(temp, `${JSON.stringify({ ...record, configMaps: [...record.configMaps] })}\n`, { signal });
    await rename(temp, this.#path(key));
  }

  async remove(key: string, signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    await rm(this.#path(key), { force: true });
  }

  async all(signal?: AbortSignal): Promise<Record<string, RegistryRecord>> {
    const names = await readdir(this.dir).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? [] : Promise.reject(err)));
    const records: Record<string, RegistryRecord> = {};
    for (const name of names.filter((n) => n.endsWith('.json'))) {
      const record = await readRecord(join(this.dir, name), signal);
      if (record !== undefined) records[decodeURIComponent(name.slice(0, -'.json'.length))] = record;
    }
    return records;
  }

  #path(key: string): string {
    return join(this.dir, `${encodeURIComponent(key)}.json`);
  }
}

async function readRecord(path: string, signal: AbortSignal | undefined): Promise<RegistryRecord | undefined> {
  try {
    return JSON.parse(await readFile(path, { encoding: 'utf8', signal })) as RegistryRecord;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

/**
 * One cluster's part of a registry shared by a fleet (fleet.ts): its records are kept under
 * `<cluster>/<namespace>/<name>` in `registry`, so the sets `ns/web` of two clusters are two records;
 * the view reads and writes them by `namespace/name`, and `all()` lists only this cluster's.
 */
export function clusterRegistry(registry: ExternalRegistry, cluster: string): ExternalRegistry {
  const prefix = `${cluster}/`;
  return {
    get: (key, signal) => registry.get(prefix + key, signal),
    put: (key, record, signal) => registry.put(prefix + key, record, signal),
    remove: (key, signal) => registry.remove(prefix + key, signal),
    all: async (signal) => {
      const mine = Object.entries(await registry.all(signal)).filter(([key]) => key.startsWith(prefix));
      return Object.fromEntries(mine.map(([key, record]) => [key.slice(prefix.length), record]));
    },
  };
}
