// startTestEnvironment refuses bad options before it starts anything, naming the option and the value.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { startTestEnvironment } from '../../src/envtest/index.js';
import { mergeFlags } from '../../src/envtest/options.js';

const notOnlyCrds = fileURLToPath(new URL('fixtures/crd-and-configmap.yaml', import.meta.url));

describe('startTestEnvironment options', () => {
  it.each([
    [{ apiServerPort: 70_000 }, 'option apiServerPort must be a TCP port (1–65535), got 70000'],
    [{ etcdPort: -1 }, 'option etcdPort must be a whole number >= 1, got -1'],
    [{ kubernetesVersion: 'latest' }, "option kubernetesVersion must be a release such as '1.37.2', 'v1.37.2' or '1.37', got \"latest\""],
    [{ crds: 'config/crd' }, 'option crds must be an array of CRD objects or file/directory paths, got "config/crd"'],
    [{ crds: [null] }, 'option crds[0] must be a CRD object or a file/directory path, got null'],
    [{ apiServerArgs: ['watch-cache=false'] }, "option apiServerArgs must be an array of '--flag=value' strings"],
    [{ controllerManager: 'yes' }, "option controllerManager must be a boolean or { args: ['--flag=value', …] }"],
    [{ startTimeoutMs: 0 }, 'option startTimeoutMs must be a finite number of milliseconds > 0, got 0'],
    [{ signal: {} }, 'option signal must be an AbortSignal'],
    [{ crds: [{ kind: 'CustomResourceDefinition' }, 'no/such/dir'] }, 'option crds[1]: no/such/dir does not exist (a relative path is resolved from the working directory'],
    // The reader of kube-informer/crd: a CRD file holds CRDs only (the fixture's second document is a ConfigMap).
    [{ crds: [notOnlyCrds] }, `option crds[0]: ${notOnlyCrds}:36: document 2 is a ConfigMap (v1), not a CustomResourceDefinition`],
  ])('refuses %j with INVALID_OPTION', async (options, message) => {
    const err = await startTestEnvironment(options as never).catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'INVALID_OPTION' });
    expect((err as Error).message).toContain(`startTestEnvironment: ${message}`);
  });

  it('merges flags: a user --name=value replaces the default, --name= removes it, others are appended', () => {
    expect(mergeFlags(['--a=1', '--b=2', '--c=3'], ['--b=20', '--c=', '--d=4'])).toEqual(['--a=1', '--b=20', '--d=4']);
    expect(mergeFlags(['--a=1'])).toEqual(['--a=1']);
  });
});
