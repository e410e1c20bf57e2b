// kube-informer/envtest on the real binaries: a CRD from a file established and served, a controller
// against it, restart, a clean stop, and the bad inputs that need a real server (a rejected CRD, a
// wrong version, the test process killed while the servers run).

import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { resolveBinaryAssets, startTestEnvironment, type TestEnvironment } from '../../src/envtest/index.js';
import { type KubeObject, type ResourceDescriptor, SharedInformerFactory } from '../../src/index.js';
import { Action, Controller } from '../../src/controller.js';
import { alive } from '../envtest/fake-binaries.js';

const repo = fileURLToPath(new URL('../..', import.meta.url));
const gadgetsCrd = join(repo, 'test/apiserver/fixtures/gadgets-crd.yaml');
const group = 'envtest.kube-informer.dev';
type Gadget = KubeObject & { spec?: { size?: number }; status?: { observedGeneration?: number } };

describe('startTestEnvironment on the real kube-apiserver', () => {
  let env: TestEnvironment;

  beforeAll(async () => {
    env = await startTestEnvironment({ crds: [gadgetsCrd], kubernetesVersion: '1.37' });
  });
  afterAll(async () => {
    await env?.stop();
  });

  it('installs the CRD from a YAML file: Established and served', async () => {
    expect(env.crds).toEqual([`gadgets.${group}`]);
    expect(env.kubernetesVersion).toMatch(/^1\.37\.\d+$/);
    const custom = env.kubeConfig.makeApiClient(CustomObjectsApi);
    const list = (await custom.listNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'gadgets' })) as { items: unknown[] };
    expect(list.items).toEqual([]);
  });

  it('runs a controller against it that writes status through the status subresource', async () => {
    const custom = env.kubeConfig.makeApiClient(CustomObjectsApi);
    const at = { group, version: 'v1', namespace: 'default', plural: 'gadgets' };
    await custom.createNamespacedCustomObject({ ...at, body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 3 } } });
    const gadgets: ResourceDescriptor<Gadget> = { group, version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true };
    const factory = new SharedInformerFactory(env.kubeConfig, { logger: false });
    const controller = Controller.for(factory, gadgets).build(async (_key, ctx) => {
      const gadget = ctx.object;
      if (gadget === undefined || gadget.status?.observedGeneration === gadget.metadata?.generation) return Action.done();
      const body = { ...(JSON.parse(JSON.stringify(gadget)) as Gadget), status: { observedGeneration: gadget.metadata?.generation } };
      await custom.replaceNamespacedCustomObjectStatus({ ...at, name: gadget.metadata!.name!, body });
      return Action.done();
    });
    const stop = new AbortController();
    factory.start(stop.signal);
    const running = controller.run(stop.signal);
    try {
      await expect
        .poll(async () => ((await custom.getNamespacedCustomObject({ ...at, name: 'g1' })) as Gadget).status?.observedGeneration, { timeout: 30_000 })
        .toBe(1);
    } finally {
      stop.abort();
      await running;
    }
  });

  it('restarts kube-apiserver and serves again', async () => {
    const before = env.pids.apiServer;
    await env.restart('kube-apiserver');
    expect(env.pids.apiServer).not.toBe(before);
    expect(alive(before)).toBe(false);
    const custom = env.kubeConfig.makeApiClient(CustomObjectsApi);
    await expect(custom.listNamespacedCustomObject({ group, version: 'v1', namespace: 'default', plural: 'gadgets' })).resolves.toBeDefined();
  });

  it('stop() leaves no process and no directory, and a second stop() is the same promise', async () => {
    const other = await startTestEnvironment();
    const pids = Object.values(other.pids).filter((pid) => pid > 0); // controllerManager is 0: not run
    expect(pids.every(alive)).toBe(true);
    const stopping = other.stop();
    expect(other.stop()).toBe(stopping);
    await stopping;
    expect(pids.map(alive)).toEqual(pids.map(() => false));
    expect(existsSync(other.dir)).toBe(false);
  });
});

describe('startTestEnvironment bad input on the real binaries', () => {
  it('a CRD the server rejects (non-structural schema): ENVTEST_CRD_REJECTED quoting the server, nothing left', async () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `loose.${group}` },
      spec: {
        group,
        scope: 'Namespaced',
        names: { plural: 'loose', singular: 'loose', kind: 'Loose' },
        // `spec` has no type: not structural, which apiextensions.k8s.io/v1 refuses.
        versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: { type: 'object', properties: { spec: { description: 'untyped' } } } } }],
      },
    };
    const tmp = mkdtempSync(join(tmpdir(), 'envtest-crd-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp; // envtest's directory lands here, so the test sees whether it is removed
    onTestFinished(() => {
      if (saved === undefined) delete process.env.TMPDIR;
      else process.env.TMPDIR = saved;
      rmSync(tmp, { recursive: true, force: true });
    });
    const err = await startTestEnvironment({ crds: [crd] }).then(() => new Error('started'), (e: unknown) => e as Error);
    expect(readdirSync(tmp)).toEqual([]);
    expect(err).toMatchObject({ code: 'ENVTEST_CRD_REJECTED' });
    expect(err.message).toContain(`envtest: the API server refused CustomResourceDefinition loose.${group}: `);
    expect(err.message).toContain('HTTP 422');
    expect(err.message).toContain('openAPIV3Schema.properties[spec].type: Required value: must not be empty for specified object fields');
    expect(err.message).toContain('a schema must be structural');
  });

  it('a release that is not cached: ENVTEST_NO_BINARIES with the setup-envtest command for it', async () => {
    await expect(startTestEnvironment({ kubernetesVersion: '1.30', binaryAssetsDir: undefined })).rejects.toMatchObject({
      code: 'ENVTEST_NO_BINARIES',
      message: expect.stringContaining('setup-envtest@latest use 1.30.x -p path'),
    });
  });

  it('a wrong version in a named directory: ENVTEST_WRONG_VERSION naming the release found and the fix', async () => {
    const found = resolveBinaryAssets();
    await expect(startTestEnvironment({ kubernetesVersion: '1.30', binaryAssetsDir: found.dir })).rejects.toMatchObject({
      code: 'ENVTEST_WRONG_VERSION',
      message: expect.stringMatching(/kubernetesVersion 1\.30 was asked for, but .*kube-apiserver \(from the binaryAssetsDir option\) is v1\.37\.\d+\. Fix: /),
    });
  });

  it('the test process killed (SIGKILL) while the servers run: nothing is left', async () => {
    const script = [
      `import { startTestEnvironment } from ${JSON.stringify(join(repo, 'src/envtest/index.ts'))};`,
      'const env = await startTestEnvironment({ stopTimeoutMs: 5000 });',
      'console.log(JSON.stringify({ pids: env.pids, dir: env.dir }));',
      'setInterval(() => {}, 1000);',
    ].join('\n');
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: repo, stdio: ['ignore', 'pipe', 'inherit'] });
    onTestFinished(() => {
      child.kill('SIGKILL');
    });
    const line = await new Promise<string>((resolve, reject) => {
      let out = '';
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
        out += chunk;
        if (out.includes('\n')) resolve(out.split('\n')[0]!);
      });
      child.once('exit', (code) => reject(new Error(`the child exited (${code}) before it started envtest`)));
    });
    const { pids, dir } = JSON.parse(line) as { pids: Record<string, number>; dir: string };
    const servers = [pids.etcd!, pids.apiServer!, pids.reaper!];
    expect(servers.map(alive)).toEqual([true, true, true]);
    child.kill('SIGKILL');
    await expect.poll(() => servers.map(alive), { timeout: 30_000, interval: 200 }).toEqual([false, false, false]);
    expect(existsSync(dir)).toBe(false);
  });
});
