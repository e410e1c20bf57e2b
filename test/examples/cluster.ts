// The examples' tests on either server, one switch: KUBE_INFORMER_TEST_SERVER=fake (default) or envtest.

import type { KubeConfig } from '@kubernetes/client-node';
import { startTestEnvironment, type TestEnvironment } from '../../src/envtest/index.js';
import { newResourceClient, resources, type KubeObject, type ResourceClient, type ResourceDescriptor } from '../../src/index.js';
import type { FakeApiServer } from '../../src/testing/index.js';
import { flushPromises } from '../../src/core/clock.js';
import { startExampleCluster } from './helpers.js';

/**
 * Which server the examples' tests run on, from `KUBE_INFORMER_TEST_SERVER`: `fake` (the default:
 * `startFakeApiServer`, milliseconds per test) or `envtest` (`kube-informer/envtest`: a real etcd and
 * kube-apiserver per test, binaries from `KUBEBUILDER_ASSETS` or the cache). Any other value fails
 * every file at import, so a typo never runs the fake while you think it runs the real server.
 */
export const TEST_SERVER: 'fake' | 'envtest' = ((): 'fake' | 'envtest' => {
  const value = process.env.KUBE_INFORMER_TEST_SERVER ?? '';
  if (value === '' || value === 'fake') return 'fake';
  if (value === 'envtest') return 'envtest';
  throw new Error(`KUBE_INFORMER_TEST_SERVER=${value}: expected "fake" (the default) or "envtest"`);
})();

/** True when the tests run on envtest (the real kube-apiserver). */
export const ON_ENVTEST = TEST_SERVER === 'envtest';

/** Timeout of a hook that starts a cluster and of a test that waits on one: envtest starts in seconds. */
export const CLUSTER_TIMEOUT_MS = ON_ENVTEST ? 180_000 : 30_000;

/**
 * The server an example's test runs against, with the same async operations on both. `fake` is the
 * fake API server on `fake`, `undefined` on envtest: what only a fake can do (count requests, inject
 * faults, count open watches) is guarded by it, and such tests are skipped on envtest with a reason.
 */
export interface ExampleCluster {
  /** `fake` or `envtest`. */
  readonly kind: 'fake' | 'envtest';
  /** A client-node `KubeConfig` for the server. */
  readonly kubeConfig: KubeConfig;
  /** The fake server, for fake-only checks; `undefined` on envtest. */
  readonly fake: FakeApiServer | undefined;
  /** The envtest environment; `undefined` on the fake. */
  readonly env: TestEnvironment | undefined;
  /**
   * Creates `obj`. On envtest the namespace is created first when missing, a Pod without a spec gets
   * one container, and a `status` given is written through the status subresource after the create
   * (the real server drops it from a create; the fake keeps it).
   */
  create<T extends KubeObject>(resource: ResourceDescriptor<T>, obj: T): Promise<T>;
  /** The object, or `undefined` when there is none. */
  get<T extends KubeObject>(resource: ResourceDescriptor<T>, name: string, namespace?: string): Promise<T | undefined>;
  /** Every object of `resource` (in `namespace` when given). */
  list<T extends KubeObject>(resource: ResourceDescriptor<T>, namespace?: string): Promise<T[]>;
  /**
   * Replaces `obj` as the fake's `update` does. On envtest it is laid over the stored object (metadata
   * merged, fields not given kept: a Pod's spec is immutable) and `status`, when given, is written
   * through the status subresource.
   */
  update<T extends KubeObject>(resource: ResourceDescriptor<T>, obj: T): Promise<T>;
  /** Deletes the object (on envtest: answered once the server accepted the delete). */
  delete(resource: ResourceDescriptor<KubeObject>, name: string, namespace?: string): Promise<void>;
  /** Stops the server: no process, socket or directory left. */
  close(): Promise<void>;
}

/**
 * Starts the server `KUBE_INFORMER_TEST_SERVER` names: the fake that knows the examples' kinds, or a
 * fresh envtest. Call it in `beforeEach` with {@link CLUSTER_TIMEOUT_MS}.
 */
export async function startTestCluster(): Promise<ExampleCluster> {
  if (!ON_ENVTEST) return fakeCluster(await startExampleCluster());
  return envtestCluster(await startTestEnvironment({ startTimeoutMs: CLUSTER_TIMEOUT_MS - 10_000 }));
}

function fakeCluster(server: FakeApiServer): ExampleCluster {
  return {
    kind: 'fake',
    kubeConfig: server.kubeConfig,
    fake: server,
    env: undefined,
    create: (resource, obj) => Promise.resolve(server.create(resource, obj)),
    get: (resource, name, namespace) => Promise.resolve(server.get(resource, name, namespace)),
    list: (resource, namespace) => Promise.resolve(server.list(resource, namespace)),
    update: (resource, obj) => Promise.resolve(server.update(resource, obj)),
    delete: (resource, name, namespace) => Promise.resolve(void server.delete(resource, name, namespace)),
    close: () => server.close(),
  };
}

function envtestCluster(env: TestEnvironment): ExampleCluster {
  const clients = new Map<ResourceDescriptor<KubeObject>, ResourceClient<KubeObject>>();
  const client = <T extends KubeObject>(resource: ResourceDescriptor<T>): ResourceClient<T> => {
    const key = resource as ResourceDescriptor<KubeObject>;
    if (!clients.has(key)) clients.set(key, newResourceClient(env.kubeConfig, key, { fieldManager: 'example-test' }));
    return clients.get(key) as unknown as ResourceClient<T>;
  };
  const namespaces = new Set<string>();
  const ensureNamespace = async (name: string | undefined): Promise<void> => {
    if (name === undefined || namespaces.has(name)) return;
    try {
      await client(resources.namespaces).create({ metadata: { name } });
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode !== 409) throw err;
    }
    namespaces.add(name);
  };
  const get = async <T extends KubeObject>(resource: ResourceDescriptor<T>, name: string, namespace?: string): Promise<T | undefined> => {
    try {
      return await client(resource).get(name, resource.namespaced ? (namespace ?? 'default') : undefined);
    } catch (err) {
      if ((err as { statusCode?: number }).statusCode === 404) return undefined;
      throw err;
    }
  };
  const writeStatus = async <T extends KubeObject>(resource: ResourceDescriptor<T>, stored: T, status: unknown): Promise<T> =>
    status === undefined ? stored : client(resource).replaceStatus({ ...stored, status } as T);
  return {
    kind: 'envtest',
    kubeConfig: env.kubeConfig,
    fake: undefined,
    env,
    async create(resource, obj) {
      const namespace = resource.namespaced ? (obj.metadata?.namespace ?? 'default') : undefined;
      await ensureNamespace(namespace);
      const { status, ...rest } = obj as typeof obj & { status?: unknown };
      const body = { ...rest, metadata: { ...obj.metadata, namespace } } as typeof obj & { spec?: unknown };
      if (resource === (resources.pods as ResourceDescriptor<KubeObject>) && body.spec === undefined) body.spec = { containers: [{ name: 'main', image: 'example' }] };
      return writeStatus(resource, await client(resource).create(body), status);
    },
    get,
    async list(resource, namespace) {
      const items = (await client(resource).list()).items;
      return namespace === undefined ? items : items.filter((o) => o.metadata?.namespace === namespace);
    },
    async update(resource, obj) {
      const stored = await get(resource, obj.metadata?.name ?? '', obj.metadata?.namespace);
      if (stored === undefined) throw new Error(`update: ${resource.resource} ${obj.metadata?.namespace ?? ''}/${obj.metadata?.name ?? ''} does not exist`);
      const { status, ...rest } = obj as typeof obj & { status?: unknown };
      const body = { ...stored, ...rest, metadata: { ...stored.metadata, ...obj.metadata, resourceVersion: stored.metadata?.resourceVersion } };
      // Nothing but status to change: no write of the main resource (the real server would still record it).
      const unchanged = JSON.stringify(body) === JSON.stringify(stored);
      return writeStatus(resource, unchanged ? stored : await client(resource).replace(body), status);
    },
    async delete(resource, name, namespace) {
      await client(resource).delete(name, resource.namespaced ? (namespace ?? 'default') : undefined);
    },
    async close() {
      for (const c of clients.values()) c.close();
      await env.stop();
    },
  };
}

/**
 * Waits until `cond()` holds. On the fake: I/O and promise turns (never a timer), as `until` in
 * helpers.ts. On envtest: polls every 20 ms for up to 60 s (a real server answers in real time).
 * `what` names the wait in the error (a function: computed then, e.g. with what was seen).
 */
export async function eventually(cond: () => boolean | Promise<boolean>, what: string | (() => string)): Promise<void> {
  if (!ON_ENVTEST) {
    for (let i = 0; i < 50_000; i++) {
      if (await cond()) return;
      await flushPromises(1);
    }
  } else {
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline) {
      if (await cond()) return;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }
  throw new Error(`timed out waiting for ${typeof what === 'string' ? what : what()} (on ${TEST_SERVER})`);
}
