// The Backup operator of docs/operator-guide.md on envtest (a real etcd and kube-apiserver): the CRD with its
// conversion webhook, the validating webhook and the controller under one Manager (the guide shows this file's code).

import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources } from '../../src/index.js';
import { startTestEnvironment, type TestEnvironment } from '../../src/envtest/index.js';
import { backups, type BackupV2 } from '../../examples/backup/crd.js';
import { runBackupOperator } from '../../examples/backup/main.js';
import { planName } from '../../examples/backup/operator.js';

/** A port nothing listens on now, for the webhook server (the API server must know it before it listens). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer().listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
    probe.on('error', reject);
  });
}

/** Polls `attempt` in real time (a real server has no fake clock) until it returns a value; its last error after 60 s. */
async function eventually<T>(attempt: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const value = await attempt();
      if (value !== undefined) return value;
    } catch (err) {
      if (Date.now() > deadline) throw err;
    }
    if (Date.now() > deadline) throw new Error('timed out');
    await sleep(200);
  }
}

describe('the Backup operator on envtest', () => {
  let env: TestEnvironment;
  const stop = new AbortController();
  let running: Promise<void>;

  beforeAll(async () => {
    env = await startTestEnvironment(); // the operator installs its own CRD, with the conversion webhook
    running = runBackupOperator(env.kubeConfig, stop.signal, { port: await freePort() });
  });
  afterAll(async () => {
    stop.abort();
    await running;
    await env?.stop();
  });

  it('takes a Backup written at v2, writes its plan, reports Ready, and reads back at v2', async () => {
    const v2 = newResourceClient(env.kubeConfig, backups.descriptors.v2);
    const configMaps = newResourceClient(env.kubeConfig, resources.configmaps);
    try {
      const weekly: BackupV2 = {
        apiVersion: 'backup.example.com/v2',
        kind: 'Backup',
        metadata: { name: 'weekly', namespace: 'default' },
        spec: { schedule: '0 4 * * 0', storage: { bucket: 'archive' }, retention: { count: 4 } },
      };
      await eventually(() => v2.create(weekly)); // once the CRD is served and the conversion webhook answers

      const plan: ConfigMap = await eventually(() => configMaps.get(planName('weekly'), 'default'));
      expect(plan.data).toEqual({ schedule: '0 4 * * 0', bucket: 'archive', keep: '4' });
      const ready = await eventually(async () => {
        const got = await v2.get('weekly', 'default');
        return got.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? got : undefined;
      });
      expect(ready.spec).toEqual(weekly.spec); // stored at v1, converted back by the webhook
    } finally {
      v2.close();
      configMaps.close();
    }
  });

  it('refuses a schedule that is not a cron expression (the validating webhook)', async () => {
    const v1 = newResourceClient(env.kubeConfig, backups.descriptor);
    try {
      const bad = { apiVersion: 'backup.example.com/v1', kind: 'Backup', metadata: { name: 'bad', namespace: 'default' }, spec: { schedule: 'daily', bucket: 'archive' } };
      const refused = await eventually(async () => {
        // The API server picks up a new webhook configuration within a second or so: until then it admits.
        const err = await v1.create(bad).then(() => v1.delete('bad', 'default').then(() => undefined), (e: unknown) => e);
        return err === undefined ? undefined : err;
      });
      expect(String(refused)).toContain('a cron expression has 5 fields, got 1');
    } finally {
      v1.close();
    }
  });
});
