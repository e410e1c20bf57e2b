// The {{Kind}} controller on envtest: a real etcd and kube-apiserver from kube-informer/envtest. Skipped, saying why, when their binaries are not on this machine.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources } from 'kube-informer';
import { resolveBinaryAssets, startTestEnvironment, type TestEnvironment } from 'kube-informer/envtest';
import { {{plural}}, type {{Kind}} } from '../../src/crd.js';
import { configMapName, {{kindVar}}Controller } from '../../src/controller.js';

/** Why envtest cannot run here (no etcd or kube-apiserver found), or undefined when it can. */
function missingBinaries(): string | undefined {
  try {
    resolveBinaryAssets();
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}
const missing = missingBinaries();
if (missing !== undefined) console.warn(`envtest tests skipped: ${missing}`);

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

describe.skipIf(missing !== undefined)('the {{Kind}} controller on envtest', () => {
  let env: TestEnvironment;
  const stop = new AbortController();
  let running: Promise<void>;

  beforeAll(async () => {
    env = await startTestEnvironment({ crds: [{{plural}}] });
    const { factory, controller } = {{kindVar}}Controller(env.kubeConfig, { logger: false });
    factory.start(stop.signal);
    running = controller.run(stop.signal);
  }, 120_000);
  afterAll(async () => {
    stop.abort();
    await running;
    await env?.stop();
  });

  it('writes the ConfigMap and reports Ready; the ConfigMap goes with the {{Kind}}', async () => {
    const client = newResourceClient<{{Kind}}>(env.kubeConfig, {{plural}}.descriptor);
    const configMaps = newResourceClient<ConfigMap>(env.kubeConfig, resources.configmaps);
    await client.create({ apiVersion: '{{group}}/v1', kind: '{{Kind}}', metadata: { name: 'sample', namespace: 'default' }, spec: { message: 'hello' } });

    const ready = await eventually(async () => {
      const current = await client.get('sample', 'default');
      return current.status?.conditions?.find((c) => c.type === 'Ready' && c.status === 'True') === undefined ? undefined : current;
    });
    expect(ready.status?.observedGeneration).toBe(ready.metadata?.generation);
    expect((await configMaps.get(configMapName('sample'), 'default')).data).toEqual({ message: 'hello' });

    await client.delete('sample', 'default');
    await eventually(async () => ((await client.get('sample', 'default').catch(() => undefined)) === undefined ? true : undefined));
    await expect(configMaps.get(configMapName('sample'), 'default')).rejects.toMatchObject({ statusCode: 404 });
    client.close();
    configMaps.close();
  }, 90_000);
});
