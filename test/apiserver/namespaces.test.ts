// A Controller over a namespace set on the real kube-apiserver, run as a ServiceAccount bound (Roles) to
// some namespaces only: namespaces added and removed while it runs, the lists counted from the server's
// audit log (an added namespace: one list per cached resource; the others: none), a forbidden namespace
// loud while the others reconcile, and a namespace that does not exist listed as an empty 200.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Action, Controller } from '../../src/controller/index.js';
import type { KubeObject } from '../../src/core/index.js';
import { newResourceClient, resources, SharedInformerFactory } from '../../src/index.js';
import { AuditLog, type AuditEvent } from './audit.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';
import { applyObjects } from './service-account.js';

async function eventually(cond: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(50);
  }
}

describe('a Controller over a namespace set on kube-apiserver', () => {
  let server: RealApiServer;
  let dir: string;
  let audit: AuditLog;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ki-namespaces-'));
    audit = new AuditLog(dir);
    server = await startRealApiServer({ private: true, apiServerArgs: audit.apiServerArgs });
  });
  afterAll(async () => {
    await server?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('adds a namespace with one list per resource and none of the others, removes one reconciling nothing of it; a forbidden one is loud', async () => {
    const [sys, a, b, c, locked] = await Promise.all(['ki-ns-sys', 'ki-ns-a', 'ki-ns-b', 'ki-ns-c', 'ki-ns-locked'].map((p) => freshNamespace(server, p)));
    // kube-apiserver lists a namespace that does not exist as an empty list (200): why the set checks.
    const cms = newResourceClient(server.kubeConfig, resources.configmaps);
    expect((await cms.list({ namespace: `${a}-missing` })).items).toEqual([]);
    cms.close();

    // The ServiceAccount may list and watch Secrets and ConfigMaps in a, b and c — not in locked.
    const core = server.kubeConfig.makeApiClient(CoreV1Api);
    await core.createNamespacedServiceAccount({ namespace: sys, body: { metadata: { name: 'op' } } });
    const issued = await core.createNamespacedServiceAccountToken({ name: 'op', namespace: sys, body: { spec: { audiences: [], expirationSeconds: 3600 } } });
    const username = `system:serviceaccount:${sys}:op`;
    await applyObjects(
      server,
      [a, b, c].flatMap((ns) => [
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: 'op', namespace: ns }, rules: [{ apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['list', 'watch'] }] },
        { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: { name: 'op', namespace: ns }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'op' }, subjects: [{ kind: 'ServiceAccount', name: 'op', namespace: sys }] },
      ] as unknown as KubeObject[]),
    );
    const secrets = newResourceClient(server.kubeConfig, resources.secrets);
    const children = newResourceClient(server.kubeConfig, resources.configmaps);
    for (const ns of [a, b, c, locked]) {
      for (const name of ['s1', 's2']) {
        const secret = await secrets.create({ metadata: { name, namespace: ns } });
        await children.create({ metadata: { name: `${name}-child`, namespace: ns, ownerReferences: [{ apiVersion: 'v1', kind: 'Secret', name, uid: secret.metadata!.uid!, controller: true }] } });
      }
    }
    secrets.close();
    children.close();

    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'api', server: server.server, caData: Buffer.from(server.ca).toString('base64') }],
      users: [{ name: 'op', token: issued.status?.token ?? '' }],
      contexts: [{ name: 'api', cluster: 'api', user: 'op' }],
      currentContext: 'api',
    });
    const reconciled: string[] = [];
    const warnings: string[] = [];
    const logger = { debug: () => {}, info: () => {}, warn: (m: string) => void warnings.push(m), error: () => {} };
    const factory = new SharedInformerFactory(kc, { logger, informerOptions: { syncFailureThreshold: 1 } });
    const controller = Controller.for(factory, resources.secrets)
      .owns(resources.configmaps)
      .build(async (key) => {
        reconciled.push(key);
        return Action.done();
      }, { name: 'ns-set', namespaces: [a, b, locked], logger });
    const stop = new AbortController();
    factory.start(stop.signal);
    const running = controller.run(stop.signal);
    try {
      // The lists of the ServiceAccount in a namespace, from the audit log: a list, or a streaming list.
      const lists = (ns: string, events: AuditEvent[] = audit.of(username)): number =>
        events.filter((e) => e.namespace === ns && (e.resource === 'secrets' || e.resource === 'configmaps') && e.code === 200 && (e.verb === 'list' || (e.verb === 'watch' && e.uri.includes('sendInitialEvents=true')))).length;

      await eventually(() => reconciled.length >= 4 && warnings.some((w) => w.includes(`namespace ${locked} cannot sync`)), 'a and b reconciled, locked warned of');
      expect([...reconciled].sort()).toEqual([`${a}/s1`, `${a}/s2`, `${b}/s1`, `${b}/s2`]);
      expect(warnings.find((w) => w.includes(locked))).toMatch(/forbidden/);
      expect(audit.of(username).some((e) => e.namespace === locked && e.code === 403)).toBe(true);
      expect([lists(a), lists(b), lists(c)]).toEqual([2, 2, 0]);

      reconciled.length = 0;
      controller.addNamespace(c);
      await eventually(() => reconciled.length >= 2, 'c reconciled');
      await sleep(300);
      expect([...reconciled].sort()).toEqual([`${c}/s1`, `${c}/s2`]); // each primary once
      expect([lists(a), lists(b), lists(c)]).toEqual([2, 2, 2]); // one list per resource for c, none for the others

      reconciled.length = 0;
      controller.removeNamespace(a);
      const s1 = newResourceClient(server.kubeConfig, resources.secrets);
      await s1.patch('s1', b, { metadata: { labels: { touched: 'yes' } } }, 'merge');
      s1.close();
      await eventually(() => reconciled.includes(`${b}/s1`), 'b/s1 reconciled after its change');
      await sleep(300);
      expect(reconciled.filter((k) => k.startsWith(`${a}/`))).toEqual([]); // a's deletes reconciled nothing
      expect([lists(a), lists(b), lists(c)]).toEqual([2, 2, 2]); // nothing listed again
      expect(controller.namespaces()).toEqual([b, c, locked].sort());
    } finally {
      stop.abort();
      await running;
    }
  }, 20_000);
});
