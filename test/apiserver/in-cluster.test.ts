// The configmapset operator in a pod, on the real kube-apiserver in RBAC mode: a ServiceAccount bound only to the rules its Manager generates, a token from the TokenRequest API in the mount kubelet writes, rotation, SIGTERM handover.
//
// One private server for every run (its audit log is the oracle of what the operator did). The
// operator runs as a separate process started "as a kubelet would": examples/configmapset/in-cluster.ts
// with KUBERNETES_SERVICE_HOST/PORT and the mount's root, no kubeconfig.

import { mkdtemp, rm } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { awaitConverged } from '../../examples/configmapset/consistency.js';
import { configMapSets, installCrd } from '../../examples/configmapset/crd.js';
import { LEASE_NAME } from '../../examples/configmapset/in-cluster.js';
import { configMapSetManager } from '../../examples/configmapset/manager.js';
import { DirectoryRegistry } from '../../examples/configmapset/registry.js';
import { configMapSet, runScenario } from '../../examples/configmapset/scenario.js';
import type { KubeObject } from '../../src/core/index.js';
import { newResourceClient } from '../../src/index.js';
import { rbacManifests } from '../../src/operations/index.js';
import { AuditLog, countByVerb, credentialOf, type AuditEvent } from './audit.js';
import { freshNamespace, startRealApiServer, watchUntil, type RealApiServer } from './harness.js';
import { OperatorPod } from './operator-pod.js';
import { servingCertificate, ServiceAccountIdentity } from './service-account.js';

const NAME = 'configmapset-operator';
const HANGING = 'test/apiserver/fixtures/in-cluster-hanging.ts';

/** Polls `accepts` until the server refuses `token`; resolves with how long that took after `since`, or -1 after 20 s. */
async function refusedAfter(sa: ServiceAccountIdentity, token: string, since: number): Promise<number> {
  for (let i = 0; i < 80; i++) {
    if (!(await sa.accepts(token))) return Date.now() - since;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return -1;
}

describe('a ServiceAccount of the real kube-apiserver, as a pod has one', () => {
  let server: RealApiServer;
  let dir: string;
  let audit: AuditLog;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ki-in-cluster-'));
    audit = new AuditLog(dir);
    server = await startRealApiServer({ private: true, apiServerArgs: audit.apiServerArgs });
    await installCrd(server.kubeConfig, AbortSignal.timeout(60_000));
  });
  afterAll(async () => {
    await server?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  it('serves a certificate valid for 127.0.0.1 that verifies against the CA the mount gets', async () => {
    const cert = await servingCertificate(server);
    expect(cert.authorizationError).toBeUndefined();
    expect(cert.authorized).toBe(true);
    expect(cert.validFor127).toBe(true);
  });

  /** A ServiceAccount in `system` bound to the rules generated for the operator watching `watch` (Roles only). */
  async function operatorAccount(system: string, watch: string): Promise<ServiceAccountIdentity> {
    const sa = await ServiceAccountIdentity.create(server, system, NAME);
    const manifests = rbacManifests(configMapSetManager({ POD_NAMESPACE: system, WATCH_NAMESPACE: watch }).permissions(), { name: NAME, namespace: system, serviceAccountName: NAME });
    expect(manifests.map((m) => `${m.kind} ${m.metadata?.namespace}`).sort()).toEqual([`Role ${system}`, `Role ${watch}`, `RoleBinding ${system}`, `RoleBinding ${watch}`].sort());
    expect(await sa.apply(manifests as KubeObject[])).toEqual([]);
    return sa;
  }

  it.each([
    ['read at the loader\'s check, before the old one is revoked: no 401', false],
    ['revoked at once, the check set to 10 min: re-read after a 401, a few 401s and no loop', true],
  ] as const)('token rotation, the new token %s — watches and writes go on, no relist', async (_how, via401) => {
    const watch = await freshNamespace(server, 'ki-rotate');
    const sa = await operatorAccount(`ki-rotate-system-${via401 ? 'b' : 'a'}`, watch);
    const registryDir = join(dir, `registry-rotate-${via401 ? 'b' : 'a'}`);
    const registry = new DirectoryRegistry(registryDir);
    const args = ['--leader-elect', '--watch-namespace', watch, ...(via401 ? ['--token-check-ms', '600000'] : [])];
    const pod = await OperatorPod.start({ server, serviceAccount: sa, registryDir, args });
    try {
      await pod.process.waitFor(/leading \(term 1\)/, 20_000);
      const before = await runScenario({ kubeConfig: server.kubeConfig, namespace: watch, registry, log: () => undefined, stepTimeoutMs: 20_000 });
      expect(before.passed, pod.process.output()).toBe(true);

      // As kubelet: a new token written over the mount. Either the process re-reads it (its stat check,
      // ≤ 10 s) before the old one is revoked (kubelet's old token stays valid until it expires), or the
      // old one is revoked at once and only a 401 tells the process.
      const rotatedAt = Date.now();
      const old = await pod.rotate();
      const reread = via401 ? undefined : await pod.process.waitFor(/read a new service-account token/, 15_000);
      const revokedAt = Date.now();
      await sa.revoke(old);
      const refusedMs = await refusedAfter(sa, old.token, revokedAt);
      expect(refusedMs, 'the old token was still accepted 20 s after its Secret was deleted').toBeGreaterThanOrEqual(0);
      const refusedAt = revokedAt + refusedMs;
      // The server's word: the probe with the old token answered 401 (no user), the same probe with the new one 201.
      expect(audit.unauthorized(revokedAt).filter((e) => e.resource === 'selfsubjectreviews')).toHaveLength(1);
      expect(await sa.accepts(pod.token.token)).toBe(true);

      const after = await runScenario({ kubeConfig: server.kubeConfig, namespace: watch, registry, log: () => undefined, stepTimeoutMs: 20_000 });
      expect(after.passed, pod.process.output()).toBe(true);
      const rereadAt = Date.parse((JSON.parse(reread ?? (await pod.process.waitFor(/read a new service-account token/, 5_000))) as { time: string }).time);
      // The leader's renewals go on with the new token (one every 2 s).
      const renewed = (): AuditEvent[] => audit.of(sa.username, Math.max(refusedAt, rereadAt)).filter((e) => e.verb === 'update' && e.resource === 'leases' && e.code === 200);
      for (let i = 0; i < 40 && renewed().length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 100));
      expect(renewed().map((e) => e.credential)[0]).toBe(credentialOf(pod.token.token));
      const requests = audit.of(sa.username, rotatedAt);
      // The 401s of requests other than the test's own SelfSubjectReviews (which probe the old token).
      const operator401s = audit.unauthorized(rotatedAt).filter((e) => e.resource !== 'selfsubjectreviews');
      const settled = Math.max(refusedAt, rereadAt, ...operator401s.map((e) => e.at));
      process.stderr.write(
        `in-cluster: rotation (${via401 ? 'via a 401' : 'via the check'}) — new token read ${rereadAt - rotatedAt} ms after the rewrite, old token refused ${refusedMs} ms after its Secret was deleted; ` +
          `401s of the operator: ${operator401s.length} (${operator401s.map((e) => `${e.verb} ${e.uri.split('?')[0]}`).join(', ')}); since then ${JSON.stringify(countByVerb(requests.filter((e) => e.at > settled)))}\n`,
      );
      // Every request after the switch carried the new token, and some were writes (the scenario's, the Lease's renewals).
      const sinceSettled = requests.filter((e) => e.at > settled);
      expect(new Set(sinceSettled.map((e) => e.credential))).toEqual(new Set([credentialOf(pod.token.token)]));
      expect(sinceSettled.filter((e) => e.verb === 'patch' && e.resource === 'configmaps' && e.code === 200).length).toBeGreaterThan(0);
      // No relist storm: the informers' watches went on, not one list since the rotation.
      expect(requests.filter((e) => e.verb === 'list').map((e) => e.uri)).toEqual([]);
      if (via401) {
        // No 401 loop: each request in flight when the old token was refused got one 401 (2–4 seen: the
        // finalizers' PATCHes, a Lease renewal), then the token was re-read; a loop would be hundreds.
        expect(operator401s.length).toBeGreaterThan(0);
        expect(operator401s.length).toBeLessThanOrEqual(10);
      } else {
        expect(operator401s).toEqual([]);
        expect(pod.process.output()).not.toMatch(/401|Unauthorized/);
      }
    } finally {
      await pod.stop();
    }
  });

  it('SIGTERM with a reconcile in flight and a second replica waiting: the reconcile is stopped within the grace, the Lease released, the second replica leads within 1 s', async () => {
    const watch = await freshNamespace(server, 'ki-handover');
    const system = 'ki-handover-system';
    const sa = await operatorAccount(system, watch);
    const registryDir = join(dir, 'registry-handover');
    const registry = new DirectoryRegistry(registryDir);
    // The default retry period (2 s): the standby watches the Lease, so it does not wait for its next try.
    const args = ['--leader-elect', '--watch-namespace', watch];
    const first = await OperatorPod.start({ server, serviceAccount: sa, registryDir, args, script: HANGING, env: { HANG_REGISTRY: '1' } });
    let second: OperatorPod | undefined;
    const sets = newResourceClient(server.kubeConfig, configMapSets, { fieldManager: 'test-user' });
    try {
      await first.process.waitFor(/leading \(term 1\)/, 20_000);
      second = await OperatorPod.start({ server, serviceAccount: sa, registryDir, args, script: HANGING, env: { HANG_REGISTRY: '0' } });
      await second.synced();
      await sets.create(configMapSet('web', watch, { names: ['a', 'b'], data: { k: 'v' } }));
      expect((await awaitConverged({ kubeConfig: server.kubeConfig, namespace: watch, registry, timeoutMs: 20_000 })).difference).toBeUndefined();
      await sets.delete('web', watch);
      await first.process.waitFor(/registry remove of .*web hangs/, 20_000);

      // Every change of the Lease from now on, until the second replica holds it.
      const secondIdentity = `${hostname()}-${second.process.pid}`;
      type Lease = { spec?: { holderIdentity?: string; acquireTime?: string; renewTime?: string } };
      const changes = watchUntil(server.kubeConfig, `/apis/coordination.k8s.io/v1/namespaces/${system}/leases`, { fieldSelector: `metadata.name=${LEASE_NAME}` }, (e) => (e.object as Lease).spec?.holderIdentity === secondIdentity);
      const stopped = await first.stop(10_000); // SIGTERM; kubelet's SIGKILL after a 10 s grace
      expect(stopped.signal, first.process.output()).toBeNull();
      expect(stopped.code).toBe(0);
      expect(first.process.output()).toContain('registry remove of');
      expect(first.process.output()).toMatch(/stopped by its signal/);
      const events = (await changes).map((e) => (e.object as Lease).spec ?? {});
      const released = events.find((l) => (l.holderIdentity ?? '') === '');
      const taken = events.find((l) => l.holderIdentity === secondIdentity);
      expect(released, JSON.stringify(events)).toBeDefined();
      const handoverMs = Date.parse(taken!.acquireTime!) - Date.parse(released!.renewTime!);
      process.stderr.write(`in-cluster: SIGTERM → exit ${stopped.ms} ms (grace 10 000); Lease released → second replica leads ${handoverMs} ms\n`);
      expect(handoverMs).toBeLessThan(1_000);
      await second.process.waitFor(/leading \(term 1\)/, 5_000);
      // The second replica finishes the cleanup the first was stopped in.
      const done = await awaitConverged({ kubeConfig: server.kubeConfig, namespace: watch, registry, timeoutMs: 20_000, expect: (s) => (s.sets.length === 0 ? undefined : 'the set is still there') });
      expect(done.difference, second.process.output()).toBeUndefined();
    } finally {
      sets.close();
      await Promise.all([first.stop(), second?.stop()]);
    }
  });
});
