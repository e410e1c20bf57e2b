// A fresh project installs the packed tarball and follows docs/testing.md's vitest recipe: its global
// setup starts envtest from KUBEBUILDER_ASSETS with a CRD from a file, and its test runs a controller
// against the real kube-apiserver.

import { execFileSync } from 'node:child_process';
import { mkdirSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildRealApiServer } from './harness.js';
import { packedProject, repo } from './packed-project.js';

let scratch = '';
let project = '';

describe('kube-informer/envtest from the packed tarball, with vitest', () => {
  beforeAll(() => {
    ({ scratch, project } = packedProject('kube-informer-envtest-pack-', { type: 'module' }));
    // The peer dependency and the test runner come from our own install: no network needed.
    mkdirSync(join(project, 'node_modules/@kubernetes'), { recursive: true });
    symlinkSync(join(repo, 'node_modules/@kubernetes/client-node'), join(project, 'node_modules/@kubernetes/client-node'));
    symlinkSync(join(repo, 'node_modules/vitest'), join(project, 'node_modules/vitest'));
    writeFileSync(join(project, 'vitest.config.ts'), "import { defineConfig } from 'vitest/config';\nexport default defineConfig({ test: { globalSetup: ['test/global-setup.ts'], testTimeout: 60_000 } });\n");
    // docs/testing.md's recipe, word for word.
    writeFileSync(
      join(project, 'test/global-setup.ts'),
      [
        "import type { TestProject } from 'vitest/node';",
        "import { startTestEnvironment } from 'kube-informer/envtest';",
        '',
        'export default async function setup(project: TestProject) {',
        "  const env = await startTestEnvironment({ crds: ['config/crd/bases'] });",
        "  project.provide('kubeconfigPath', env.kubeconfigPath);",
        '  return () => env.stop();',
        '}',
        '',
        "declare module 'vitest' {",
        '  export interface ProvidedContext { kubeconfigPath: string }',
        '}',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'test/gadget.test.ts'),
      [
        "import { inject, it, expect } from 'vitest';",
        "import { CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';",
        "import { SharedInformerFactory } from 'kube-informer';",
        "import { Action, Controller } from 'kube-informer/controller';",
        '',
        "const group = 'envtest.kube-informer.dev';",
        "const at = { group, version: 'v1', namespace: 'default', plural: 'gadgets' };",
        '',
        "it('a controller writes the status of a Gadget on the real server', async () => {",
        '  const kubeConfig = new KubeConfig();',
        "  kubeConfig.loadFromFile(inject('kubeconfigPath'));",
        '  const custom = kubeConfig.makeApiClient(CustomObjectsApi);',
        "  await custom.createNamespacedCustomObject({ ...at, body: { apiVersion: `${group}/v1`, kind: 'Gadget', metadata: { name: 'g1' }, spec: { size: 3 } } });",
        '  const factory = new SharedInformerFactory(kubeConfig);',
        "  const gadgets = { group, version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true } as const;",
        '  const controller = Controller.for(factory, gadgets).build(async (_key, ctx) => {',
        '    const gadget = ctx.object as any;',
        '    if (gadget === undefined || gadget.status?.observedGeneration === gadget.metadata.generation) return Action.done();',
        '    await custom.replaceNamespacedCustomObjectStatus({ ...at, name: gadget.metadata.name, body: { ...structuredClone(gadget), status: { observedGeneration: gadget.metadata.generation } } });',
        '    return Action.done();',
        '  });',
        '  const stop = new AbortController();',
        '  factory.start(stop.signal);',
        '  const running = controller.run(stop.signal);',
        "  await expect.poll(async () => ((await custom.getNamespacedCustomObject({ ...at, name: 'g1' })) as any).status?.observedGeneration, { timeout: 30_000 }).toBe(1);",
        '  stop.abort();',
        '  await running;',
        '});',
      ].join('\n'),
    );
  }, 600_000);

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('starts envtest from KUBEBUILDER_ASSETS in a globalSetup, installs the CRD and runs a controller against it', async () => {
    const assets = await buildRealApiServer();
    const out = execFileSync(process.execPath, [join(project, 'node_modules/vitest/vitest.mjs'), 'run'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, KUBEBUILDER_ASSETS: assets, TMPDIR: scratch },
    });
    expect(out.replace(/\u001b\[[0-9;]*m/g, '')).toMatch(/Tests\s+1 passed \(1\)/);
    // The global teardown stopped it: no envtest directory is left in the project's TMPDIR.
    expect(readdirSync(scratch).filter((f) => f.startsWith('kube-informer-envtest-'))).toEqual([]);
  }, 300_000);
});
