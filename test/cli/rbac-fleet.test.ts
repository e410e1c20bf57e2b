// `kube-informer rbac --cluster management|target`: a MultiClusterManager's RBAC is two documents, one per kind of cluster.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runCommand } from '../../src/cli/index.js';

const fixtures = join(import.meta.dirname, 'fixtures');

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCommand(['rbac', ...argv], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: fixtures, env: {} });
  return { code, stdout, stderr };
}

type Doc = { kind: string; metadata: { name: string; namespace?: string }; rules?: unknown[] };
const objectsOf = (yaml: string): Doc[] => parseAllDocuments(yaml).map((d) => d.toJS() as Doc);

describe('kube-informer rbac --cluster', () => {
  it("target: the controllers' rules, a ClusterRole to apply on every target cluster, under a header that says so", async () => {
    const r = await run('fleet.ts', '--name', 'fleet', '--cluster', 'target');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const objects = objectsOf(r.stdout);
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual(['ClusterRole /fleet', 'ClusterRoleBinding /fleet']);
    expect(objects[0].rules).toEqual([{ apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch', 'patch'] }]);
    expect(r.stdout).toMatch(/^# RBAC for every TARGET cluster of fleet.ts /);
    expect(r.stdout).toContain('system:basic-user');
  });

  it("management: the providers' rules, a Role in the Secrets' namespace", async () => {
    const r = await run('fleet.ts', '--name', 'fleet', '--namespace', 'ops', '--cluster', 'management');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const objects = objectsOf(r.stdout);
    expect(objects.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual(['Role fleet/fleet', 'RoleBinding fleet/fleet']);
    expect(objects[0].rules).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['list', 'watch'] }]);
    expect(r.stdout).toMatch(/^# RBAC for the MANAGEMENT cluster of fleet.ts /);
  });

  it('refuses a fleet without --cluster, --cluster for a single-cluster Manager (1), and a bad --cluster (2)', async () => {
    expect(await run('fleet.ts', '--name', 'fleet')).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('fleet.ts (default) is a MultiClusterManager: its RBAC is two documents for two kinds of cluster; run with --cluster target') });
    expect(await run('manager.ts', '--name', 'op', '--cluster', 'target')).toMatchObject({ code: 1, stdout: '', stderr: expect.stringContaining('--cluster is for a MultiClusterManager; manager.ts (default) is a Manager of one cluster') });
    expect(await run('fleet.ts', '--name', 'fleet', '--cluster', 'east')).toMatchObject({ code: 2, stderr: expect.stringContaining('--cluster must be management or target, got "east"') });
  });
});
