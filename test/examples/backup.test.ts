// The Backup operator of docs/operator-guide.md on the fake API server, and its webhooks in process (the guide shows this file's code).

import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources, type KubeObject } from '../../src/index.js';
import { flushPromises, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { reviewAdmission } from '../../src/webhook/index.js';
import { backups, type Backup } from '../../examples/backup/crd.js';
import { backupOperator, FINALIZER, planName } from '../../examples/backup/operator.js';
import { convertBackup, validateBackup } from '../../examples/backup/webhooks.js';

/** Lets I/O run, one turn at a time (no timer), until `cond()` holds. */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let turn = 0; turn < 20_000; turn++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

const nightly: Backup = {
  apiVersion: 'backup.example.com/v1',
  kind: 'Backup',
  metadata: { name: 'nightly', namespace: 'default' },
  spec: { schedule: '0 3 * * *', bucket: 'archive' },
};

describe('the Backup operator on the fake API server', () => {
  let server: FakeApiServer;
  let stop: AbortController;
  let running: Promise<void>;

  beforeEach(async () => {
    server = await startFakeApiServer();
    server.create('customresourcedefinitions.apiextensions.k8s.io', backups.crd); // Backups are served, held to their schema
    const { factory, controller } = backupOperator(server.kubeConfig, { logger: false });
    stop = new AbortController();
    factory.start(stop.signal);
    running = controller.run(stop.signal);
  });
  afterEach(async () => {
    stop.abort();
    await running;
    await server.close();
  });

  const backup = (): Backup | undefined => server.get<Backup & KubeObject>(backups.descriptor, 'nightly', 'default');
  const plan = (): ConfigMap | undefined => server.get<ConfigMap & KubeObject>(resources.configmaps, planName('nightly'), 'default');

  it('writes the plan, reports Ready, and deletes the plan before the Backup goes', async () => {
    const client = newResourceClient(server.kubeConfig, backups.descriptor);
    await client.create(nightly);

    await until(() => backup()?.status?.conditions?.[0]?.status === 'True', 'Ready');
    expect(backup()?.metadata?.finalizers).toEqual([FINALIZER]);
    expect(plan()?.data).toEqual({ schedule: '0 3 * * *', bucket: 'archive', keep: '7' });
    expect(plan()?.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Backup', name: 'nightly', controller: true });

    await client.delete('nightly', 'default');
    await until(() => backup() === undefined, 'the Backup deleted');
    expect(plan()).toBeUndefined();
    client.close();
  });
});

describe('the Backup webhooks, in process', () => {
  it('refuses a schedule that is not a cron expression, naming the field', async () => {
    const result = await reviewAdmission(validateBackup, { resource: backups.descriptor, object: { ...nightly, spec: { ...nightly.spec, schedule: 'daily' } } });
    expect(result.allowed).toBe(false);
    expect(result.status?.details?.causes).toEqual([expect.objectContaining({ field: 'spec.schedule' })]);
    expect((await reviewAdmission(validateBackup, { resource: backups.descriptor, object: nightly })).allowed).toBe(true);
  });

  it('converts v1 -> v2 -> v1 without losing a field', () => {
    for (const spec of [nightly.spec, { ...nightly.spec, keep: 30 }]) {
      const v1 = { ...nightly, spec };
      const v2 = convertBackup.convert(v1, 'backup.example.com/v2');
      expect(v2).toMatchObject({ apiVersion: 'backup.example.com/v2', spec: { storage: { bucket: 'archive' } } });
      expect(convertBackup.convert(v2, 'backup.example.com/v1')).toEqual(v1);
    }
  });
});
