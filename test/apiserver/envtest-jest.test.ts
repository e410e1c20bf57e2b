// A fresh project installs the packed tarball and Jest (from the npm registry, into the project only:
// Jest is no dependency of this repository) and runs docs/testing.md's Jest recipe: the globalSetup
// starts envtest from KUBEBUILDER_ASSETS with a CRD from a file, two test files (two workers) reach it
// through KUBECONFIG, one runs a controller against it, and the globalTeardown leaves no directory.

import { spawnSync } from 'node:child_process';
import { readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRealApiServer } from './harness.js';
import { packedProject } from './packed-project.js';

let scratch = '';
let project = '';

describe('kube-informer/envtest from the packed tarball, with Jest', () => {
  beforeAll(() => {
    // docs/testing.md's recipe, word for word: package.json's type and test script, jest.config.js,
    // the global setup and teardown.
    ({ scratch, project } = packedProject('kube-informer-envtest-jest-', { type: 'module', scripts: { test: 'NODE_OPTIONS=--experimental-vm-modules jest' } }, ['jest@30', '@kubernetes/client-node@^1.4.0']));
    writeFileSync(
      join(project, 'jest.config.js'),
      "export default { globalSetup: './test/envtest-setup.mjs', globalTeardown: './test/envtest-teardown.mjs', transform: {} };\n",
    );
    writeFileSync(
      join(project, 'test/envtest-setup.mjs'),
      [
        "import { startTestEnvironment } from 'kube-informer/envtest';",
        'export default async function () {',
        "  globalThis.__ENVTEST__ = await startTestEnvironment({ crds: ['config/crd/bases'] });",
        '  process.env.KUBECONFIG = globalThis.__ENVTEST__.kubeconfigPath;   // the test workers inherit it',
        '}',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'test/envtest-teardown.mjs'),
      ['export default async function () {', '  await globalThis.__ENVTEST__?.stop();', '}'].join('\n'),
    );
    writeFileSync(
      join(project, 'test/gadget.test.mjs'),
      [
        "import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';",
        "import { SharedInformerFactory } from 'kube-informer';",
        "import { Action, Controller } from 'kube-informer/controller';",
        '',
        "const group = 'envtest.kube-informer.dev';",
        "const at = { group, version: 'v1', namespace: 'default', plural: 'gadgets' };",
        '',
        "test('a controller writes the status of a Gadget on the real server', async () => {",
        '  const kubeConfig = new KubeConfig();',
        '  kubeConfig.loadFromDefault();',
        '  const custom = kubeConfig.makeApiClient(CustomObjectsApi);',
        "  await custom.createNamespacedCustomObject({ ...at, body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 3 } } });",
        '  const factory = new SharedInformerFactory(kubeConfig);',
        "  const gadgets = { group, version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true };",
        '  const controller = Controller.for(factory, gadgets).build(async (_key, ctx) => {',
        '    const gadget = ctx.object;',
        '    if (gadget === undefined || gadget.status?.observedGeneration === gadget.metadata.generation) return Action.done();',
        '    await custom.replaceNamespacedCustomObjectStatus({ ...at, name: gadget.metadata.name, body: { ...structuredClone(gadget), status: { observedGeneration: gadget.metadata.generation } } });',
        '    return Action.done();',
        '  });',
        '  const stop = new AbortController();',
        '  factory.start(stop.signal);',
        '  const running = controller.run(stop.signal);',
        '  let observed;',
        '  for (let i = 0; i < 300 && observed !== 1; i++) {',
        "    observed = (await custom.getNamespacedCustomObject({ ...at, name: 'g1' })).status?.observedGeneration;",
        '    if (observed !== 1) await new Promise((resolve) => setTimeout(resolve, 100));',
        '  }',
        '  expect(observed).toBe(1);',
        '  stop.abort();',
        '  await running;',
        '}, 60_000);',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'test/namespaces.test.mjs'),
      [
        "import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';",
        '',
        "test('a second test file reaches the same server through KUBECONFIG', async () => {",
        '  const kubeConfig = new KubeConfig();',
        '  kubeConfig.loadFromDefault();',
        '  const namespaces = await kubeConfig.makeApiClient(CoreV1Api).listNamespace();',
        "  expect(namespaces.items.map((n) => n.metadata.name)).toContain('default');",
        '});',
      ].join('\n'),
    );
  }, 900_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('starts envtest from KUBEBUILDER_ASSETS in a globalSetup, installs the CRD, runs a controller, and the globalTeardown stops it', async () => {
    const assets = await buildRealApiServer();
    const run = spawnSync('npm', ['test'], { cwd: project, encoding: 'utf8', env: { ...process.env, KUBEBUILDER_ASSETS: assets, TMPDIR: scratch, KUBECONFIG: '' } });
    const output = `${run.stdout}\n${run.stderr}`;
    // Jest reports on stderr: both files passed, and it exited 0.
    expect(output, output).toMatch(/Tests:\s+2 passed, 2 total/);
    expect(run.status, output).toBe(0);
    // The global teardown stopped it: no envtest directory is left in the project's TMPDIR.
    expect(readdirSync(scratch).filter((f) => f.startsWith('kube-informer-envtest-'))).toEqual([]);
  }, 300_000);
});
