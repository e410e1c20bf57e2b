// loadKubeConfig({ lean: true }): a kubeconfig read without @kubernetes/client-node, held to client-node's reading of the same files; the package root loading client-node only when asked to.
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, resources } from '../../src/core/index.js';
import type https from 'node:https';
import { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig, newResourceClient, SERVICE_ACCOUNT_DIR, type KubeConfigLike } from '../../src/listwatch/index.js';
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

describe('loadKubeConfig({ lean: true })', () => {
  it("reads a kubeconfig file's server, token and namespace: kube-informer's client lists with them", async () => {
    const server = await fakeServer('secret');
    const kc = loadKubeConfig({ lean: true, kubeconfig: kubeconfigFile(`http://127.0.0.1:${server.port}`, { token: 'secret' }) });
    expect(kc.namespace).toBe('team-a');
    await newResourceClient(kc, resources.configmaps).create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'team-a' } });
    expect(server.requests().map((r) => r.authorization)).toEqual(['Bearer secret']);
  });

  it('in a pod: the mounted token and namespace; after a 401 the token file is read again and the request sent once more', async () => {
    const server = await fakeServer('old');
    const mount = tempDir();
    const dir = join(mount, SERVICE_ACCOUNT_DIR);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'token'), 'old');
    writeFileSync(join(dir, 'ca.crt'), '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n');
    writeFileSync(join(dir, 'namespace'), 'pods-home');
    const kc = loadKubeConfig({ lean: true, root: mount, env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(server.port) }, scheme: 'http', logger: false });
    expect(kc.namespace).toBe('pods-home');
    writeFileSync(join(dir, 'token'), 'new');
    server.acceptTokens('new');
    await newResourceClient(kc, resources.configmaps).list({ namespace: 'pods-home' });
    expect(server.requests().map((r) => r.authorization)).toEqual(['Bearer old', 'Bearer new']);
  });

  it('gives the server, TLS material, credentials and namespace client-node gives for the same file (a differential check), and falls back to client-node for exec', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'ca.crt'), 'CA FROM FILE');
    writeFileSync(join(dir, 'token'), 'from-file\n');
    const b64 = (t: string): string => Buffer.from(t).toString('base64');
    const fixtures: Array<[string, Record<string, unknown>, Record<string, unknown>]> = [
      ['token, CA data', { 'certificate-authority-data': b64('CA DATA') }, { token: 'abc' }],
      ['tokenFile (client-node does not read it), CA file', { 'certificate-authority': join(dir, 'ca.crt') }, { tokenFile: join(dir, 'token') }],
      ['token-file (read by client-node)', {}, { 'token-file': join(dir, 'token') }],
      ['client certificate data, tls-server-name', { 'certificate-authority-data': b64('CA'), 'tls-server-name': 'api.internal' }, { 'client-certificate-data': b64('CERT'), 'client-key-data': b64('KEY') }],
      ['insecure, token', { 'insecure-skip-tls-verify': true }, { token: 'xyz' }],
      ['exec (read by client-node)', {}, { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'printf', args: ['{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"exec-token"}}'], interactiveMode: 'Never' } }],
    ];
    const seen = async (kc: KubeConfigLike): Promise<unknown> => {
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      const text = (v: unknown): unknown => (Buffer.isBuffer(v) ? v.toString() : v);
      return { server: kc.getCurrentCluster()?.server, ca: text(opts.ca), cert: text(opts.cert), key: text(opts.key), insecure: opts.rejectUnauthorized === false, servername: opts.servername, auth: (opts.headers as Record<string, unknown> | undefined)?.Authorization };
    };
    for (const [what, cluster, user] of fixtures) {
      const file = join(dir, `${what.replace(/\W+/g, '-')}.yaml`);
      writeFileSync(file, JSON.stringify({ apiVersion: 'v1', kind: 'Config', clusters: [{ name: 'c', cluster: { server: 'https://127.0.0.1:6443', ...cluster } }], users: [{ name: 'u', user }], contexts: [{ name: 'x', context: { cluster: 'c', user: 'u', namespace: 'ns-x' } }], 'current-context': 'x' }));
      const reference = new KubeConfig();
      reference.loadFromFile(file);
      const lean = loadKubeConfig({ lean: true, kubeconfig: file });
      expect({ what, ...((await seen(lean)) as object), namespace: lean.namespace }).toEqual({ what, ...((await seen(reference)) as object), namespace: 'ns-x' });
    }
  });

  it('reads several KUBECONFIG files through client-node (merged as kubectl does), and names a missing context or file', () => {
    const first = kubeconfigFile('https://127.0.0.1:6443', { token: 'one' });
    const second = join(tempDir(), 'second');
    writeFileSync(second, JSON.stringify({ clusters: [{ name: 'c2', cluster: { server: 'https://127.0.0.1:6444' } }], users: [{ name: 'u2', user: { token: 'two' } }], contexts: [{ name: 'ctx2', context: { cluster: 'c2', user: 'u2' } }] }));
    const kc = loadKubeConfig({ lean: true, env: { KUBECONFIG: `${first}:${second}` } });
    expect([kc.getCurrentCluster()?.server, kc.namespace]).toEqual(['https://127.0.0.1:6443', 'team-a']);
    expect(() => loadKubeConfig({ lean: true, kubeconfig: first, context: 'nope' })).toThrow(expect.objectContaining({ code: ErrorCodes.KUBECONFIG, message: `the kubeconfig ${first} has no context "nope" (it has: ctx)` }) as unknown as Error);
    expect(() => loadKubeConfig({ lean: true, kubeconfig: join(tempDir(), 'missing') })).toThrow(/does not exist/);
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
