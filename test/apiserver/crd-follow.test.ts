// Informers that follow their CRD, on the real kube-apiserver: a CRD deleted and re-created under a running
// Manager with followCustomResources (as a ServiceAccount granted exactly manager.permissions(), so the
// CRD watch by name is authorized through resourceNames), and removeInformer leaving no socket open.

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { newResourceClient, resources, SharedInformerFactory, type KubeObject } from '../../src/index.js';
import { Action, Controller } from '../../src/controller.js';
import { ensureCustomResourceDefinitions } from '../../src/crd/index.js';
import { Manager, rbacManifests, type RbacObject } from '../../src/operations/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';
import { leftoverHandles, openHandles } from '../helpers/handles.js';

const suffix = randomBytes(3).toString('hex');
const group = `follow-${suffix}.kube-informer.dev`;
const gadgets = { group, version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true } as const;
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: `gadgets.${group}` },
  spec: {
    group,
    scope: 'Namespaced',
    names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget', listKind: 'GadgetList' },
    versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } }],
  },
};

async function until(cond: () => boolean | Promise<boolean>, what: string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const RBAC_KINDS = { ClusterRole: resources.clusterroles, ClusterRoleBinding: resources.clusterrolebindings, Role: resources.roles, RoleBinding: resources.rolebindings } as const;

describe('informers that follow their CRD, on the real kube-apiserver', () => {
  let server: RealApiServer;
  let namespace: string;
  beforeAll(async () => {
    server = await startRealApiServer();
    namespace = await freshNamespace(server, 'ki-follow');
  });
  afterAll(async () => {
    await server?.stop();
  });

  /** A ServiceAccount's KubeConfig (TokenRequest). */
  async function serviceAccount(name: string): Promise<KubeConfig> {
    const core = server.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
    const token = await core.createNamespacedServiceAccountToken({ name, namespace, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'api', server: server.server, caData: Buffer.from(server.ca).toString('base64') }],
      users: [{ name, token: token.status?.token ?? '' }],
      contexts: [{ name: 'api', cluster: 'api', user: name }],
      currentContext: 'api',
    });
    return kc;
  }

  /** Creates the gadgets, retrying while the re-created resource is not served yet (404) or its storage initializes (429). */
  async function createGadgets(names: string[]): Promise<void> {
    const client = newResourceClient<KubeObject>(server.kubeConfig, gadgets);
    try {
      for (const name of names) {
        for (let attempt = 0; ; attempt++) {
          try {
            await client.create({ apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name, namespace } });
            break;
          } catch (err) {
            const status = (err as { statusCode?: number }).statusCode;
            if ((status !== 404 && status !== 429) || attempt > 100) throw err;
            await new Promise((r) => setTimeout(r, 50));
          }
        }
      }
    } finally {
      client.close();
    }
  }

  it('stays ready while the CRD is deleted, and reconciles every re-created object once it is Established again', async () => {
    const crds = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    await ensureCustomResourceDefinitions(crds, [crd as never]);
    await createGadgets(['a', 'b']);
    const lines: string[] = [];
    const logger = { debug: () => undefined, info: (m: string) => void lines.push(`info ${m}`), warn: (m: string) => void lines.push(`warn ${m}`), error: (m: string) => void lines.push(`error ${m}`) };
    const kubeConfig = await serviceAccount('follower');
    const factory = new SharedInformerFactory(kubeConfig, { namespace, logger });
    const reconciled: string[] = [];
    const controller = Controller.for<KubeObject>(factory, gadgets).build(async (key, ctx) => {
      reconciled.push(`${key} ${ctx.object === undefined ? 'gone' : 'present'}`);
      return Action.done();
    }, { logger: false });
    const manager = new Manager(factory, { controllers: [controller], followCustomResources: true, probes: { port: 0, host: '127.0.0.1' }, logger });
    // Exactly what the manager declares, the CRD's list and watch by name included.
    expect(manager.permissions().filter((p) => p.resource === 'customresourcedefinitions')).toMatchObject([{ verbs: ['list', 'watch'], resourceNames: [crd.metadata.name] }]);
    for (const object of rbacManifests(manager.permissions(), { name: 'follower', namespace }) as RbacObject[]) {
      const client = newResourceClient<KubeObject>(server.kubeConfig, RBAC_KINDS[object.kind as keyof typeof RBAC_KINDS] as never);
      await client.create(object as never);
      client.close();
    }
    const stop = new AbortController();
    const running = manager.run(stop.signal);
    try {
      await until(() => reconciled.length === 2, 'the first reconciles');
      const informer = factory.informers()[`${group}/v1/gadgets`];
      await until(() => informer.health().watch.connected, 'the gadgets watch');

      await crds.delete(crd.metadata.name);
      await until(() => informer.health().state === 'absent', 'the informer to turn absent');
      await until(() => reconciled.length === 4, 'the reconciles of the deletes');
      expect(reconciled.slice(2).sort()).toEqual([`${namespace}/a gone`, `${namespace}/b gone`]);
      const readyz = await fetch(`${manager.probeUrl}/readyz`);
      expect(readyz.status).toBe(200);
      const verdict = ((await readyz.json()) as { informers: Array<{ name: string; ready: boolean; detail?: string }> }).informers.find((i) => i.name === `${group}/v1/gadgets`);
      expect(verdict).toMatchObject({ ready: true, detail: expect.stringContaining('its resource is not served') as unknown });
      expect(lines.filter((l) => l.startsWith('warn'))).toEqual([expect.stringContaining(`informer ${group}/v1/gadgets: its resource is not served`) as unknown]);

      await ensureCustomResourceDefinitions(crds, [crd as never]);
      await createGadgets(['a', 'b', 'c']);
      await until(() => new Set(reconciled.slice(4)).size === 3, 'the full reconcile');
      expect([...new Set(reconciled.slice(4))].sort()).toEqual([`${namespace}/a present`, `${namespace}/b present`, `${namespace}/c present`]);
      await until(() => informer.health().state === 'running', 'running again');
      // Woken by the CRD watch (the ServiceAccount may list and watch it by name), not by the backoff.
      expect(lines).toContainEqual(expect.stringContaining(`CustomResourceDefinition ${crd.metadata.name} is Established: informer ${group}/v1/gadgets lists again`));
      expect(lines.filter((l) => /forbidden/i.test(l))).toEqual([]);
      expect((await fetch(`${manager.probeUrl}/readyz`)).status).toBe(200);
    } finally {
      stop.abort();
      await running;
      await crds.delete(crd.metadata.name).catch(() => undefined);
      crds.close();
    }
  });

  it('removeInformer stops one informer and leaves no socket open, while the factory runs on', async () => {
    const factory = new SharedInformerFactory(server.kubeConfig, { namespace, logger: false });
    const configMaps = factory.forResource(resources.configmaps);
    const stop = new AbortController();
    const running = factory.run(stop.signal);
    await configMaps.whenSynced(stop.signal);
    await until(() => configMaps.health().watch.connected, 'the configmaps watch');
    const before = openHandles();
    const secrets = factory.forResource(resources.secrets);
    await secrets.whenSynced(stop.signal);
    await until(() => secrets.health().watch.connected, 'the secrets watch');
    expect(openHandles().filter((h) => h === 'TCPSocketWrap').length).toBeGreaterThan(before.filter((h) => h === 'TCPSocketWrap').length);
    await factory.removeInformer(resources.secrets);
    expect(await leftoverHandles(before, { tries: 200, delayMs: 10 })).toEqual([]);
    expect(Object.keys(factory.informers())).toEqual(['v1/configmaps']);
    expect(configMaps.health().watch.connected).toBe(true);
    stop.abort();
    await running;
  });
});
