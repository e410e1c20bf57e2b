// loadLeanKubeConfig: a kubeconfig read without @kubernetes/client-node (token, tokenFile, in-cluster), what it refuses, and the package root loading client-node only when asked to.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, resources } from '../../src/core/index.js';
import { loadLeanKubeConfig, newResourceClient, SERVICE_ACCOUNT_DIR } from '../../src/listwatch/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';

failOnUnhandledRejections();

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), 'kube-informer-lean-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

async function fakeServer(token: string): Promise<FakeApiServer> {
  const server = await startFakeApiServer({ requireToken: true, token, logger: false });
  cleanups.push(() => server.close());
  return server;
}

/** A kubeconfig file: one cluster at `server`, one context, the user given. */
function kubeconfigFile(server: string, user: Record<string, unknown>, namespace = 'team-a'): string {
  const file = join(tempDir(), 'config');
  const yaml = [
    'apiVersion: v1',
    'kind: Config',
    'clusters:',
    `- name: c\n  cluster:\n    server: ${server}`,
    'users:',
    `- name: u\n  user: ${JSON.stringify(user)}`,
    'contexts:',
    `- name: ctx\n  context:\n    cluster: c\n    user: u\n    namespace: ${namespace}`,
    'current-context: ctx',
    '',
  ].join('\n');
  writeFileSync(file, yaml);
  return file;
}

describe('loadLeanKubeConfig', () => {
  it("reads a kubeconfig file's server, token and namespace: kube-informer's client lists with them", async () => {
    const server = await fakeServer('secret');
    const kc = loadLeanKubeConfig({ kubeconfig: kubeconfigFile(`http://127.0.0.1:${server.port}`, { token: 'secret' }) });
    expect(kc.namespace).toBe('team-a');
    await newResourceClient(kc, resources.configmaps).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'team-a' } });
    expect(server.requests().map((r) => r.authorization)).toEqual(['Bearer secret']);
  });

  it('reads a tokenFile at each request (a rotated token is sent at once)', async () => {
    const server = await fakeServer('one');
    const tokenFile = join(tempDir(), 'token');
    writeFileSync(tokenFile, 'one\n');
    const kc = loadLeanKubeConfig({ kubeconfig: kubeconfigFile(`http://127.0.0.1:${server.port}`, { tokenFile }) });
    const client = newResourceClient(kc, resources.configmaps);
    await client.list({ namespace: 'team-a' });
    writeFileSync(tokenFile, 'two\n');
    server.acceptTokens('two');
    await client.list({ namespace: 'team-a' });
    expect(server.requests().map((r) => r.authorization)).toEqual(['Bearer one', 'Bearer two']);
  });

  it('in a pod: the mounted token and namespace; after a 401 the token file is read again and the request sent once more', async () => {
    const server = await fakeServer('old');
    const mount = tempDir();
    const dir = join(mount, SERVICE_ACCOUNT_DIR);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), 'old');
    writeFileSync(join(dir, 'ca.crt'), '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n');
    writeFileSync(join(dir, 'namespace'), 'pods-home');
    const kc = loadLeanKubeConfig({ root: mount, env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(server.port) }, scheme: 'http', logger: false });
    expect([kc.namespace, kc.source]).toEqual(['pods-home', 'in-cluster']);
    writeFileSync(join(dir, 'token'), 'new');
    server.acceptTokens('new');
    await newResourceClient(kc, resources.configmaps).list({ namespace: 'pods-home' });
    expect(server.requests().map((r) => r.authorization)).toEqual(['Bearer old', 'Bearer new']);
  });

  it('refuses what only client-node handles, naming the file, the user and the field: exec, several KUBECONFIG files, an unknown context', () => {
    const file = kubeconfigFile('https://127.0.0.1:6443', { exec: { command: 'aws' } });
    expect(() => loadLeanKubeConfig({ kubeconfig: file })).toThrow(expect.objectContaining({ code: ErrorCodes.KUBECONFIG, message: `the kubeconfig file ${file}: user "u" has exec, which loadLeanKubeConfig does not handle (it reads token, tokenFile and client certificates); use loadKubeConfig, which loads @kubernetes/client-node for them` }) as unknown as Error);
    const other = kubeconfigFile('https://127.0.0.1:6443', { token: 't' });
    expect(() => loadLeanKubeConfig({ env: { KUBECONFIG: `${file}:${other}` } })).toThrow(/KUBECONFIG names 2 files .*merging them is loadKubeConfig's/);
    expect(() => loadLeanKubeConfig({ kubeconfig: other, context: 'nope' })).toThrow(`the kubeconfig file ${other} has no context "nope" (it has: ctx)`);
    expect(() => loadLeanKubeConfig({ kubeconfig: join(tempDir(), 'missing') })).toThrow(/does not exist/);
  });
});

describe('the package root and @kubernetes/client-node', () => {
  it('importing the root loads no client-node module; loadKubeConfig loads it then', () => {
    const dir = tempDir();
    const hooks = join(dir, 'hooks.mjs');
    // An import of client-node passes the load hook; a require of it lands in require.cache.
    writeFileSync(hooks, "export async function load(url, ctx, next) { if (url.includes('/@kubernetes/client-node/')) process.stdout.write('IMPORT client-node\\n'); return next(url, ctx); }\n");
    const script = [
      "import { createRequire, register } from 'node:module';",
      `register(${JSON.stringify(`file://${hooks}`)});`,
      "const required = () => Object.keys(createRequire(import.meta.url).cache).some((k) => k.includes('/@kubernetes/client-node/'));",
      `const m = await import(${JSON.stringify(`file://${join(root, 'src/index.ts')}`)});`,
      "process.stdout.write(`imported; client-node required: ${required()}\\n`);",
      `m.loadKubeConfig({ kubeconfig: ${JSON.stringify(kubeconfigFile('https://127.0.0.1:6443', { token: 't' }))} });`,
      "process.stdout.write(`loadKubeConfig; client-node required: ${required()}\\n`);",
    ].join('\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout.split('\n').filter((l) => l !== '')).toEqual(['imported; client-node required: false', 'loadKubeConfig; client-node required: true']);
  }, 20_000);
});
