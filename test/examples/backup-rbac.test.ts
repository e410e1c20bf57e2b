// The Backup operator's static rules against what it used on the fake API server: every request it made is
// covered (static ⊇ recorded), and every verb its builder declared was used (no rule superfluous).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newResourceClient, type KubeObject } from '../../src/index.js';
import { Manager, type Permission } from '../../src/operations/index.js';
import { flushPromises, startFakeApiServer, uncoveredUses, type FakeApiServer } from '../../src/testing/index.js';
import { backups, type Backup } from '../../examples/backup/crd.js';
import { backupOperator } from '../../examples/backup/operator.js';

async function until(cond: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 20_000; turn++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const nightly: Backup = { apiVersion: 'backup.example.com/v1', kind: 'Backup', metadata: { name: 'nightly', namespace: 'default' }, spec: { schedule: '0 3 * * *', bucket: 'archive' } };

describe('the Backup operator: static RBAC against the recorded uses', () => {
  let server: FakeApiServer;
  let permissions: Permission[];

  beforeEach(async () => {
    // A server without streaming lists: the informers page, as they do on such a server (and as their
    // fallback everywhere), so `list` is exercised and shown needed.
    server = await startFakeApiServer({ watchList: false });
    server.create('customresourcedefinitions.apiextensions.k8s.io', backups.crd);
    // The operator has a token of its own: its requests are told apart from the test's.
    const { factory, controller } = backupOperator(server.kubeConfigFor('operator'), { logger: false });
    permissions = new Manager(factory, { controllers: [controller], logger: false }).permissions();
    const stop = new AbortController();
    factory.start(stop.signal);
    const running = controller.run(stop.signal);

    const client = newResourceClient(server.kubeConfig, backups.descriptor);
    const backup = (): Backup | undefined => server.get<Backup & KubeObject>(backups.descriptor, 'nightly', 'default');
    await client.create(nightly);
    await until(() => backup()?.status?.conditions?.[0]?.status === 'True', 'Ready');
    await client.delete('nightly', 'default');
    await until(() => backup() === undefined, 'the Backup deleted');
    client.close();
    stop.abort();
    await running;
  });
  afterEach(async () => {
    await server.close();
  });

  it('covers every request the operator made', () => {
    const used = server.usedPermissions({ token: 'operator' });
    expect(used.length).toBeGreaterThan(5);
    expect(uncoveredUses(used, permissions)).toEqual([]);
  });

  it('used every verb its builder declared: without any one of them, a request is uncovered', () => {
    const used = server.usedPermissions({ token: 'operator' });
    const declared = permissions.flatMap((p, i) => p.verbs.map((verb) => ({ i, verb })));
    for (const { i, verb } of declared) {
      const without = permissions.map((p, j) => (j === i ? { ...p, verbs: p.verbs.filter((v) => v !== verb) } : p));
      const p = permissions[i];
      expect(uncoveredUses(used, without), `${verb} ${p.group}/${p.resource}${p.subresource === undefined ? '' : `/${p.subresource}`} is not needed`).not.toEqual([]);
    }
  });
});
