// The RBAC rules kube-informer derives for the configmapset operator, held to the real kube-apiserver: they apply, the operator bound only to them converges, and each one removed in turn makes a run fail naming its verb and resource.
//
// One private server (RBAC mode, an audit log) for every run; the operator is examples/configmapset/in-cluster.ts
// started as a kubelet would (test/apiserver/operator-pod.ts), cluster-wide (a ClusterRole) and
// leader-elected (a Role for its Lease in its own namespace), so both kinds of generated objects are held.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { configMapSets, installCrd } from '../../examples/configmapset/crd.js';
import { LEASE_NAME } from '../../examples/configmapset/in-cluster.js';
import { configMapSetManager } from '../../examples/configmapset/manager.js';
import { DirectoryRegistry } from '../../examples/configmapset/registry.js';
import { runScenario, type ScenarioResult } from '../../examples/configmapset/scenario.js';
import type { KubeObject } from '../../src/core/index.js';
import { newResourceClient, resources } from '../../src/index.js';
import { rbacManifests } from '../../src/operations/index.js';
import { runExample } from '../examples/helpers.js';
import { AuditLog, countByVerb } from './audit.js';
import { freshNamespace, startRealApiServer, type RealApiServer } from './harness.js';
import { OperatorPod } from './operator-pod.js';
import { scaffoldManifests } from './scaffold-manifests.js';
import { applyObjects, ServiceAccountIdentity } from './service-account.js';

/** The operator's namespace (its ServiceAccount, its Lease) and names. */
const SYSTEM = 'configmapset-system';
const NAME = 'configmapset-operator';
/** The flags of every run: cluster-wide, leader-elected with a short retry, a cache that cannot sync named every second. */
const ARGS = ['--leader-elect', '--lease-retry-ms', '300', '--cache-sync-warning-ms', '1000'];

interface PolicyRule {
  apiGroups?: string[];
  resources?: string[];
  verbs: string[];
  resourceNames?: string[];
}
type RoleObject = KubeObject & { rules?: PolicyRule[] };

/** A line the apiserver's 403 puts in the operator's log for some verb of `rule` on one of its resources (quotes maybe JSON-escaped). */
function refusalOf(rule: PolicyRule): RegExp {
  const alt = (xs: readonly string[]): string => xs.map((x) => x.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')).join('|');
  return new RegExp(`cannot (${alt(rule.verbs)}) resource \\\\?"(${alt(rule.resources ?? [])})\\\\?"`);
}

const describeRule = (role: RoleObject, rule: PolicyRule): string =>
  `${role.kind} ${role.metadata?.name}: ${rule.verbs.join(',')} ${(rule.resources ?? []).map((r) => `${r}${rule.apiGroups?.[0] ? '.' + rule.apiGroups[0] : ''}`).join(',')}`;

describe('the configmapset operator bound only to the RBAC rules kube-informer generates for it', () => {
  let server: RealApiServer;
  let dir: string;
  let audit: AuditLog;
  let sa: ServiceAccountIdentity;
  let manifests: KubeObject[];
  let registryDir: string;
  /** What the run with every rule did not show in the audit log (the baseline test fills it). */
  let unexercised: string[] = [];

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ki-rbac-rules-'));
    registryDir = join(dir, 'registry');
    audit = new AuditLog(dir);
    server = await startRealApiServer({ private: true, apiServerArgs: audit.apiServerArgs });
    await installCrd(server.kubeConfig, AbortSignal.timeout(60_000));
    sa = await ServiceAccountIdentity.create(server, SYSTEM, NAME);
    const permissions = configMapSetManager({ POD_NAMESPACE: SYSTEM }).permissions();
    manifests = rbacManifests(permissions, { name: NAME, namespace: SYSTEM, serviceAccountName: NAME }) as KubeObject[];
  });
  afterAll(async () => {
    await server?.stop();
    if (dir !== undefined) await rm(dir, { recursive: true, force: true });
  });

  /** Runs the operator as the ServiceAccount and the scenario in a fresh namespace, until it passes or `until` resolves; then stops both. */
  async function run(until?: (pod: OperatorPod, scenario: Promise<ScenarioResult>) => Promise<string>): Promise<{ passed: boolean; line?: string; log: string; output: string; ms: number }> {
    const started = Date.now();
    const namespace = await freshNamespace(server, 'ki-rbac');
    const pod = await OperatorPod.start({ server, serviceAccount: sa, registryDir, args: ARGS });
    const stop = new AbortController();
    const lines: string[] = [];
    const scenario = runScenario({ kubeConfig: server.kubeConfig, namespace, registry: new DirectoryRegistry(registryDir), log: (l) => lines.push(l), stepTimeoutMs: 20_000, signal: stop.signal });
    try {
      if (until === undefined) {
        const result = await scenario;
        return { passed: result.passed, log: lines.join('\n'), output: pod.process.output(), ms: Date.now() - started };
      }
      const line = await until(pod, scenario);
      return { passed: false, line, log: lines.join('\n'), output: pod.process.output(), ms: Date.now() - started };
    } finally {
      stop.abort();
      await scenario.catch(() => undefined);
      await pod.stop(3_000);
      await cleanUp(namespace);
    }
  }

  /** Leaves no set behind (finalizers dropped, as the admin) and no Lease held: the next run starts clean. */
  async function cleanUp(namespace: string): Promise<void> {
    const sets = newResourceClient(server.kubeConfig, configMapSets);
    const leases = newResourceClient(server.kubeConfig, resources.leases);
    try {
      for (const set of (await sets.list({ namespace })).items) {
        const name = set.metadata?.name ?? '';
        await sets.patch(name, namespace, { metadata: { finalizers: null } }, 'merge').catch(() => undefined);
        await sets.delete(name, namespace).catch(() => undefined);
      }
      await leases.delete(LEASE_NAME, SYSTEM).catch(() => undefined);
    } finally {
      sets.close();
      leases.close();
    }
  }

  it('`kube-informer rbac` prints them, and they pass a server-side dry-run apply', async () => {
    const printed = await runExample('src/cli/bin.ts', ['rbac', 'examples/configmapset/manager.ts', '--name', NAME, '--namespace', SYSTEM, '--service-account', NAME]);
    expect(printed.stderr).toBe('');
    expect(printed.code).toBe(0);
    const fromCli = parseAllDocuments(printed.stdout).map((d) => d.toJSON() as KubeObject);
    expect(fromCli).toEqual(manifests);
    expect(manifests.map((m) => `${m.kind} ${m.metadata?.namespace ?? ''}/${m.metadata?.name}`).sort()).toEqual(
      [`ClusterRole /${NAME}`, `ClusterRoleBinding /${NAME}`, `Role ${SYSTEM}/${NAME}`, `RoleBinding ${SYSTEM}/${NAME}`].sort(),
    );
    expect(await sa.apply(manifests, { dryRun: true })).toEqual([]);
  });

  it.each([
    ['cert-manager', ['validating', 'defaulting', 'conversion']],
    ['self-managed', ['validating', 'conversion']],
  ] as const)('the manifests of a project from `kube-informer init --certificates %s` pass a server-side dry-run apply (kinds the server lacks listed)', async (certificates, webhooks) => {
    const name = `${certificates === 'cert-manager' ? 'hooks' : 'self'}-operator`;
    const started = Date.now();
    const { objects, files } = await scaffoldManifests(join(dir, name), { name, webhooks, certificates });
    // The Namespace for real: a dry run of what goes into it needs it to exist.
    expect(await applyObjects(server, objects.filter((o) => o.kind === 'Namespace'))).toEqual([]);
    const skipped = await applyObjects(server, objects.filter((o) => o.kind !== 'Namespace'), { dryRun: true });
    const kinds = objects.map((o) => o.kind).join(', ');
    process.stderr.write(`rbac-rules: init --certificates ${certificates}: ${files.join(' ')} → ${kinds}; not served here: ${skipped.join(', ') || 'none'} (${Date.now() - started} ms)\n`);
    expect(objects.map((o) => o.kind)).toEqual(expect.arrayContaining(['Namespace', 'ServiceAccount', 'Deployment', 'Service', 'ClusterRole', 'ClusterRoleBinding']));
    // cert-manager's Certificate (and its Issuer) need cert-manager's CRDs, which this server does not have.
    expect(skipped.map((s) => s.split(' ')[0])).toEqual(certificates === 'cert-manager' ? expect.arrayContaining(['Certificate']) : []);
    expect(skipped.every((s) => s.includes('cert-manager.io/'))).toBe(true);
  });

  it('bound only to them, it runs the scenario to the end: no request refused, and every generated verb used', async () => {
    expect(await sa.apply(manifests)).toEqual([]);
    const since = Date.now();
    const result = await run();
    expect(result.passed, `${result.log}\n--- operator:\n${result.output}`).toBe(true);
    const requests = audit.of(sa.username, since);
    expect(requests.filter((e) => e.code === 403).map((e) => `${e.verb} ${e.resource}`)).toEqual([]);
    const used = new Set(requests.filter((e) => e.code < 400 || e.code === 404 || e.code === 409).map((e) => `${e.verb} ${e.resource}`));
    const generated = manifests.flatMap((m) => (m as RoleObject).rules ?? []).flatMap((r) => (r.resources ?? []).flatMap((res) => r.verbs.map((v) => `${v} ${res}`)));
    const unused = generated.filter((g) => !used.has(g));
    process.stderr.write(`rbac-rules: the scenario as ${sa.username} in ${result.ms} ms; requests ${JSON.stringify(countByVerb(requests))}; generated but not used by this scenario: ${unused.join(', ') || 'none'}\n`);
    // The audit log shows a request's verb only: an apply that creates is a `patch` (the server checks
    // `create` too, see below), and an Event's PATCH comes only with a series (a repeat). Named here, so a new one is seen.
    // `watch leases`: only a standby watches the Lease, and this run has one replica. `list` of the
    // informers' resources: this server serves streaming lists, so the informers fill their caches with
    // a watch (`sendInitialEvents`); the rules keep `list` for a server without them (and for the paged
    // list a failed streaming list falls back to).
    expect([...unused].sort()).toEqual(['create configmaps', 'list configmaps', 'list configmapsets', 'patch events', 'watch leases']);
    unexercised = unused;
  });

  it('the generated verbs the audit log does not show, each removed alone: create configmaps is needed (an apply that creates), patch events only by a series, watch leases only by a standby', async () => {
    expect([...unexercised].sort()).toEqual(['create configmaps', 'list configmaps', 'list configmapsets', 'patch events', 'watch leases']);
    const roles = manifests.filter((m): m is RoleObject => m.kind === 'Role' || m.kind === 'ClusterRole');
    const outcomes: Record<string, string> = {};
    for (const key of unexercised) {
      const [verb, resource] = key.split(' ') as [string, string];
      const role = roles.find((r) => r.rules?.some((rule) => rule.resources?.includes(resource) && rule.verbs.includes(verb)))!;
      const rules = (role.rules ?? []).map((rule) => (rule.resources?.includes(resource) ? { ...rule, verbs: rule.verbs.filter((v) => v !== verb) } : rule));
      await sa.apply([{ ...role, rules } as RoleObject]);
      try {
        const refused = refusalOf({ verbs: [verb], resources: [resource] });
        // Either the refusal is logged, or the scenario passes without the verb.
        const result = await run((pod, scenario) =>
          Promise.race([pod.process.waitFor(refused, 30_000), scenario.then((r) => (r.passed ? 'passed' : `not converged: ${JSON.stringify(r.steps.at(-1))}`))]),
        );
        outcomes[key] = result.line === 'passed' ? `passes without it (${result.ms} ms)` : `refused: ${refused.test(result.line ?? '') ? 'names it' : result.line}`;
      } finally {
        await sa.apply([role]);
      }
    }
    process.stderr.write(`rbac-rules: verbs removed alone: ${JSON.stringify(outcomes)}\n`);
    expect(Object.fromEntries(Object.entries(outcomes).map(([k, v]) => [k, v.replace(/ \(\d+ ms\)/, '')]))).toEqual({
      'create configmaps': 'refused: names it',
      'list configmaps': 'passes without it',
      'list configmapsets': 'passes without it',
      'patch events': 'passes without it',
      'watch leases': 'passes without it',
    });
  });

  it('each rule removed in turn: the run fails within seconds naming a verb and resource of that rule', async () => {
    expect(await sa.apply(manifests)).toEqual([]);
    const roles = manifests.filter((m): m is RoleObject => m.kind === 'Role' || m.kind === 'ClusterRole');
    const times: string[] = [];
    const loopStarted = Date.now();
    for (const role of roles) {
      for (const [i, rule] of (role.rules ?? []).entries()) {
        await sa.apply([{ ...role, rules: (role.rules ?? []).filter((_, j) => j !== i) } as RoleObject]);
        try {
          const result = await run((pod) => pod.process.waitFor(refusalOf(rule), 30_000));
          times.push(`${describeRule(role, rule)} → ${result.ms} ms: ${result.line?.slice(0, 200)}`);
          expect(result.line).toMatch(refusalOf(rule));
        } finally {
          await sa.apply([role]);
        }
      }
    }
    process.stderr.write(`rbac-rules: ${times.length} rules removed one at a time in ${Date.now() - loopStarted} ms:\n  ${times.join('\n  ')}\n`);
    expect(times.length).toBe(roles.flatMap((r) => r.rules ?? []).length);
  });
});
