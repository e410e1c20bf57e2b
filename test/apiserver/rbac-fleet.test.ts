// A fleet bound only to the RBAC kube-informer generates for it, held to the real kube-apiserver: one
// ServiceAccount, given the management cluster's rules (`permissionReport({ cluster: 'management' })`:
// the kubeconfig Secrets) and the target clusters' (`{ cluster: 'target' }`: the controller's reads and
// uses), reads its cluster from a Secret, verifies it (a SelfSubjectReview, which no generated rule
// grants: system:basic-user does) and reconciles on it; the same fleet without the target rules cannot.
// The suite's shared server plays both the management and the one target cluster.
import type { ConfigMap, Secret } from 'kubernetes-types/core/v1.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KubeObject } from '../../src/core/index.js';
import { Action } from '../../src/controller/index.js';
import { newResourceClient, resources, SharedInformerFactory } from '../../src/index.js';
import { leanKubeConfigFromText } from '../../src/listwatch/index.js';
import { KUBECONFIG_SECRET_LABEL, kubeconfigSecrets, MultiClusterController, MultiClusterManager, rbacManifests } from '../../src/operations/index.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';
import { ServiceAccountIdentity } from './service-account.js';
import { kubeconfigText } from '../helpers/kubeconfig.js';

let server: RealApiServer;
let sa: ServiceAccountIdentity;
let token: string;
/** Where the kubeconfig Secrets live (management) and where the controller works (target). */
let secretsNamespace: string;
let workNamespace: string;
const granted: KubeObject[] = [];

beforeAll(async () => {
  server = await startRealApiServer();
  [secretsNamespace, workNamespace] = await Promise.all([freshNamespace(server, 'ki-fleet-rbac-secrets'), freshNamespace(server, 'ki-fleet-rbac')]);
  sa = await ServiceAccountIdentity.create(server, await freshNamespace(server, 'ki-fleet-rbac-sa'), 'fleet');
  token = (await sa.issueToken()).token;
});
afterAll(async () => {
  await sa?.remove(granted);
  await server?.stop();
});

/** A kubeconfig (text) of the ServiceAccount's token for the server: CA inline, no file paths. */
function serviceAccountKubeconfig(): string {
  return kubeconfigText({ server: server.server, ca: server.ca, user: token, name: 'api' });
}

/** The fleet as the ServiceAccount: Secrets read from `secretsNamespace`, a labeler of ConfigMaps in `workNamespace` of each cluster. */
function fleet(): { manager: MultiClusterManager; factory: SharedInformerFactory; provider: ReturnType<typeof kubeconfigSecrets> } {
  const factory = new SharedInformerFactory(leanKubeConfigFromText(serviceAccountKubeconfig(), 'the fleet ServiceAccount'), { logger: false });
  const provider = kubeconfigSecrets({ factory, namespace: secretsNamespace });
  const labeler = MultiClusterController.for(resources.configmaps)
    .uses(resources.configmaps, ['patch'])
    .build(
      async (_key, ctx) => {
        if (ctx.object === undefined || ctx.object.metadata?.labels?.cluster === ctx.cluster) return Action.done();
        await ctx.client(resources.configmaps).patch(ctx.name, ctx.namespace, { metadata: { labels: { cluster: ctx.cluster ?? '' } } }, 'merge');
        return Action.done();
      },
      { name: 'labeler', logger: false },
    );
  const manager = new MultiClusterManager({ providers: [provider], controllers: [labeler], factoryOptions: { namespace: workNamespace, logger: false }, logger: false });
  return { manager, factory, provider };
}

async function eventually(cond: () => boolean | Promise<boolean>, what: () => string, ms = 15_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what()}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('a fleet bound only to its generated RBAC (management and target)', () => {
  it('engages its cluster from the Secret and reconciles there; without the target rules the cluster stays unready', async () => {
    const { manager: probe } = fleet();
    const management = probe.permissionReport({ cluster: 'management' });
    const target = probe.permissionReport({ cluster: 'target' });
    expect([management.warnings, target.warnings]).toEqual([[], []]);
    const subject = { namespace: sa.namespace, serviceAccountName: sa.name };
    const managementObjects = rbacManifests(management.permissions, { name: `${sa.namespace}-management`, ...subject }) as KubeObject[];
    const targetObjects = rbacManifests(target.permissions, { name: `${sa.namespace}-target`, ...subject }) as KubeObject[];
    granted.push(...managementObjects);
    await sa.apply(managementObjects);

    const secrets = newResourceClient(server.kubeConfig, resources.secrets);
    const configmaps = newResourceClient(server.kubeConfig, resources.configmaps);
    const secret: Secret = { metadata: { name: 'hub', namespace: secretsNamespace, labels: { [KUBECONFIG_SECRET_LABEL]: 'true' } }, stringData: { kubeconfig: serviceAccountKubeconfig() } };
    await secrets.create(secret);
    const cm: ConfigMap = { metadata: { name: 'a', namespace: workNamespace }, data: { x: '1' } };
    await configmaps.create(cm);

    const run = async (check: (manager: MultiClusterManager) => Promise<void>): Promise<void> => {
      const { manager, factory, provider } = fleet();
      const stop = new AbortController();
      const running = manager.run(stop.signal);
      try {
        await check(manager);
        expect(provider.stats().refused).toMatchObject({ unauthorized: 0 });
      } finally {
        stop.abort();
        await running;
        await factory.shutdown();
      }
    };
    try {
      // 1. The management rules only: the Secret is read and its cluster engaged, but the cluster's caches are refused (403).
      await run(async (manager) => {
        await eventually(() => manager.readiness().clusters.some((c) => c.problems.some((p) => /forbidden|403/i.test(p))), () => JSON.stringify(manager.readiness()));
        expect(manager.readiness().ok).toBe(true); // one cluster never makes the fleet unready; the Secrets are listed
      });
      // 2. And the target rules: the cluster is ready and the ConfigMap labelled (the patch is the ServiceAccount's).
      granted.push(...targetObjects);
      await sa.apply(targetObjects);
      await run(async (manager) => {
        await eventually(async () => (await configmaps.get('a', workNamespace)).metadata?.labels?.cluster === 'hub', () => JSON.stringify(manager.readiness()));
        expect(manager.readiness().clusters).toMatchObject([{ name: 'hub', ready: true, problems: [] }]);
      });
    } finally {
      secrets.close();
      configmaps.close();
    }
  });
});
