// loadInClusterConfig and loadKubeConfig: the service-account mount, the token re-read when rewritten, before it expires and after a 401.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CoreV1Api } from '@kubernetes/client-node';
import { afterEach, describe, expect, it } from 'vitest';
import { ErrorCodes, resources } from '../../src/core/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import {
  InClusterConfigError,
  loadInClusterConfig,
  loadKubeConfig,
  newResourceClient,
  SERVICE_ACCOUNT_DIR,
  type InClusterKubeConfig,
} from '../../src/listwatch/index.js';
import { FakeClock, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { startServer } from './helpers.js';

failOnUnhandledRejections();

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const CA = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';
/** 2026-12-06T00:00:00Z, the fake wall clock's start. */
const WALL = Date.UTC(2026, 11, 6);

/** A JWT whose payload holds `iat` and `exp` (seconds), signed by nobody: the client never verifies it. */
function jwt(name: string, iatMs: number, lifeMs: number): string {
  const part = (o: object): string => Buffer.from(JSON.stringify(o)).toString('base64url');
  return `${part({ alg: 'RS256' })}.${part({ sub: name, iat: iatMs / 1000, exp: (iatMs + lifeMs) / 1000 })}.c2ln`;
}

/** A service-account volume as the kubelet writes it: `token` → `..data/token`, `..data` → a timestamped folder swapped atomically. */
class Mount {
  readonly root = mkdtempSync(join(tmpdir(), 'kube-informer-sa-'));
  readonly dir = join(this.root, SERVICE_ACCOUNT_DIR);
  #generation = 0;

  constructor(files: Record<string, string>) {
    mkdirSync(this.dir, { recursive: true });
    this.write(files);
    for (const name of Object.keys(files)) symlinkSync(join('..data', name), join(this.dir, name));
    cleanups.push(() => rmSync(this.root, { recursive: true, force: true }));
  }

  /** Writes a new generation and swaps `..data` to it, as the kubelet's atomic writer does. */
  write(files: Record<string, string>): void {
    const gen = join(this.dir, `..gen_${++this.#generation}`);
    mkdirSync(gen);
    for (const [name, content] of Object.entries(files)) writeFileSync(join(gen, name), content);
    symlinkSync(gen, join(this.dir, '..data_tmp'));
    renameSync(join(this.dir, '..data_tmp'), join(this.dir, '..data'));
  }
}

async function fakeServer(token: string): Promise<FakeApiServer> {
  const server = await startFakeApiServer({ requireToken: true, token, logger: false });
  cleanups.push(() => server.close());
  return server;
}

function envFor(server: FakeApiServer): Record<string, string> {
  return { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(server.port) };
}

/** The `Authorization` header the KubeConfig puts on a request now. */
async function bearer(kc: InClusterKubeConfig): Promise<string | undefined> {
  const opts: { headers?: Record<string, string> } = {};
  await kc.applyToHTTPSOptions(opts);
  return opts.headers?.Authorization;
}

function caught(fn: () => unknown): Error & { code?: string } {
  try {
    fn();
  } catch (err) {
    return err as Error & { code?: string };
  }
  throw new Error('expected a throw');
}

describe('loadInClusterConfig', () => {
  it('builds the cluster from the environment and the mount: https, the CA, the namespace; an IPv6 host in brackets', async () => {
    const mount = new Mount({ token: 'tok-1\n', 'ca.crt': CA, namespace: 'team-a\n' });
    const kc = loadInClusterConfig({ root: mount.root, env: { KUBERNETES_SERVICE_HOST: '10.96.0.1', KUBERNETES_SERVICE_PORT: '443' }, logger: false });
    expect(kc.getCurrentCluster()?.server).toBe('https://10.96.0.1:443');
    expect(Buffer.from(kc.getCurrentCluster()!.caData!, 'base64').toString()).toBe(CA);
    expect(kc.namespace).toBe('team-a');
    expect(kc.getContextObject(kc.getCurrentContext())?.namespace).toBe('team-a');
    expect(kc.tokenFile).toBe(join(mount.dir, 'token'));
    expect(await bearer(kc)).toBe('Bearer tok-1');
    const v6 = loadInClusterConfig({ root: mount.root, env: { KUBERNETES_SERVICE_HOST: 'fd00::1', KUBERNETES_SERVICE_PORT: '6443', POD_NAMESPACE: 'from-env' }, logger: false });
    expect(v6.getCurrentCluster()?.server).toBe('https://[fd00::1]:6443');
    expect(v6.namespace).toBe('from-env');
  });

  it('verifies the API server with the mounted ca.crt over https and sends the token (a self-signed server for 127.0.0.1)', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-informer-ca-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const selfSigned = (name: string): void => {
      execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1', '-subj', '/CN=kubernetes',
        '-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`)], { stdio: 'ignore' });
    };
    try {
      selfSigned('server');
      selfSigned('stranger');
    } catch {
      t.skip();
    }
    const cert = readFileSync(join(dir, 'server.crt'), 'utf8');
    const server = await startServer((_req, res) => res.end('{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[]}'), { cert, key: readFileSync(join(dir, 'server.key'), 'utf8') });
    cleanups.push(() => server.close());
    const mount = new Mount({ token: 'tok-tls', 'ca.crt': cert });
    const kc = loadInClusterConfig({ root: mount.root, env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(server.port) }, logger: false });
    const list = await newResourceClient(kc, resources.configmaps).list({ namespace: 'default' });
    expect(list.metadata?.resourceVersion).toBe('7');
    expect(server.requests.map((r) => r.headers.authorization)).toEqual(['Bearer tok-tls']);
    const other = new Mount({ token: 'tok-tls', 'ca.crt': readFileSync(join(dir, 'stranger.crt'), 'utf8') });
    const wrongCa = loadInClusterConfig({ root: other.root, env: { KUBERNETES_SERVICE_HOST: '127.0.0.1', KUBERNETES_SERVICE_PORT: String(server.port) }, logger: false });
    await expect(newResourceClient(wrongCa, resources.configmaps).list({ namespace: 'default' })).rejects.toMatchObject({ code: ErrorCodes.NETWORK });
  });

  it('defaults the namespace to default without the file or POD_NAMESPACE', () => {
    const mount = new Mount({ token: 'tok', 'ca.crt': CA });
    expect(loadInClusterConfig({ root: mount.root, env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' }, logger: false }).namespace).toBe('default');
  });

  it('refuses with IN_CLUSTER_CONFIG naming the variable or the file: env unset, token missing, empty or unreadable, ca.crt missing', () => {
    const env = { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' };
    const noEnv = caught(() => loadInClusterConfig({ env: { KUBERNETES_SERVICE_PORT: '1' } }));
    expect(noEnv).toBeInstanceOf(InClusterConfigError);
    expect(noEnv.code).toBe(ErrorCodes.IN_CLUSTER_CONFIG);
    expect(noEnv.message).toMatch(/KUBERNETES_SERVICE_HOST is not set/);
    expect(caught(() => loadInClusterConfig({ env: {} })).message).toMatch(/KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set/);

    const noToken = new Mount({ 'ca.crt': CA });
    const missing = caught(() => loadInClusterConfig({ root: noToken.root, env }));
    expect(missing.code).toBe(ErrorCodes.IN_CLUSTER_CONFIG);
    expect(missing.message).toBe(`the service-account token file ${join(noToken.dir, 'token')} does not exist`);

    const empty = new Mount({ token: ' \n', 'ca.crt': CA });
    expect(caught(() => loadInClusterConfig({ root: empty.root, env })).message).toBe(`the service-account token file ${join(empty.dir, 'token')} is empty`);

    const unreadable = new Mount({ 'ca.crt': CA });
    mkdirSync(join(unreadable.dir, 'token')); // a folder where the file should be: EISDIR, whoever runs the test
    const err = caught(() => loadInClusterConfig({ root: unreadable.root, env }));
    expect(err.code).toBe(ErrorCodes.IN_CLUSTER_CONFIG);
    expect(err.message).toMatch(new RegExp(`token file ${join(unreadable.dir, 'token')} cannot be read: .*EISDIR`));

    const noCa = new Mount({ token: 'tok' });
    expect(caught(() => loadInClusterConfig({ root: noCa.root, env })).message).toBe(`the service-account CA bundle ${join(noCa.dir, 'ca.crt')} does not exist`);
    expect(caught(() => loadInClusterConfig({ root: noCa.root, env, tokenCheckIntervalMs: 0 })).code).toBe(ErrorCodes.INVALID_OPTION);
  });

  it('re-reads a rewritten token file after tokenCheckIntervalMs, not before (one stat per interval)', async () => {
    const clock = new FakeClock(0, WALL);
    const mount = new Mount({ token: 'old', 'ca.crt': CA });
    const kc = loadInClusterConfig({ root: mount.root, env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' }, clock, logger: false });
    mount.write({ token: 'new', 'ca.crt': CA });
    expect(await bearer(kc)).toBe('Bearer old');
    await clock.advance(9_999);
    expect(await bearer(kc)).toBe('Bearer old');
    await clock.advance(1);
    expect(await bearer(kc)).toBe('Bearer new');
  });

  it('re-reads the token at 80 % of its life even when the file looks unchanged', async () => {
    const clock = new FakeClock(0, WALL);
    const mount = new Mount({ token: jwt('a', WALL, 600_000), 'ca.crt': CA });
    const infos: string[] = [];
    const logger = { debug: () => {}, info: (m: string) => infos.push(m), warn: () => {}, error: () => {} };
    // A check interval longer than the token's life: only its expiry can bring the re-read.
    const kc = loadInClusterConfig({ root: mount.root, env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' }, clock, logger, tokenCheckIntervalMs: 3_600_000 });
    const next = jwt('b', WALL + 470_000, 600_000);
    mount.write({ token: next, 'ca.crt': CA });
    await clock.advance(479_999);
    expect(await bearer(kc)).toBe(`Bearer ${jwt('a', WALL, 600_000)}`);
    await clock.advance(1);
    expect(await bearer(kc)).toBe(`Bearer ${next}`);
    expect(infos).toEqual([`read a new service-account token from ${join(mount.dir, 'token')}`]);
  });

  it('keeps a valid token with a warning when the file vanishes at a check, and fails with IN_CLUSTER_CONFIG once that token expired', async () => {
    const clock = new FakeClock(0, WALL);
    const mount = new Mount({ token: jwt('a', WALL, 60_000), 'ca.crt': CA });
    const warnings: string[] = [];
    const logger = { debug: () => {}, info: () => {}, warn: (m: string) => warnings.push(m), error: () => {} };
    const kc = loadInClusterConfig({ root: mount.root, env: { KUBERNETES_SERVICE_HOST: 'h', KUBERNETES_SERVICE_PORT: '1' }, clock, logger });
    rmSync(join(mount.dir, '..data'));
    await clock.advance(10_000);
    expect(await bearer(kc)).toBe(`Bearer ${jwt('a', WALL, 60_000)}`);
    expect(warnings).toEqual([`the service-account token file ${join(mount.dir, 'token')} does not exist: sending the token read before (valid until 2026-12-06T00:01:00.000Z)`]);
    await clock.advance(50_000);
    await expect(bearer(kc)).rejects.toMatchObject({ code: ErrorCodes.IN_CLUSTER_CONFIG, message: expect.stringMatching(/does not exist; the token read before expired at 2026-12-06T00:01:00.000Z$/) as unknown });
  });
});

describe('a 401 with the in-cluster KubeConfig', () => {
  async function setUp(): Promise<{ server: FakeApiServer; mount: Mount; kc: InClusterKubeConfig }> {
    const server = await fakeServer('old');
    const mount = new Mount({ token: 'old', 'ca.crt': CA });
    // A fake clock that never moves: only the 401 can make the token be read again.
    const kc = loadInClusterConfig({ root: mount.root, env: envFor(server), scheme: 'http', clock: new FakeClock(0, WALL), logger: false });
    return { server, mount, kc };
  }
  const statuses = (server: FakeApiServer): Array<[string, string | undefined]> => server.requests().map((r) => [r.method, r.authorization]);

  it("client-node's own clients (kc.makeApiClient: the LeaseLock's) send the current token too, re-read after a rewrite", async () => {
    const server = await fakeServer('old');
    const mount = new Mount({ token: 'old', 'ca.crt': CA });
    const clock = new FakeClock(0, WALL);
    const kc = loadInClusterConfig({ root: mount.root, env: envFor(server), scheme: 'http', clock, logger: false });
    const api = kc.makeApiClient(CoreV1Api);
    await api.listNamespacedConfigMap({ namespace: 'default' });
    mount.write({ token: 'new', 'ca.crt': CA });
    server.acceptTokens('new');
    await clock.advance(10_000);
    await api.listNamespacedConfigMap({ namespace: 'default' });
    expect(server.requests().map((r) => r.authorization)).toEqual(['Bearer old', 'Bearer new']);
  });

  it('re-reads the token once and sends the request once more: a write succeeds with the new token', async () => {
    const { server, mount, kc } = await setUp();
    const client = newResourceClient(kc, resources.configmaps);
    mount.write({ token: 'new', 'ca.crt': CA });
    server.acceptTokens('new');
    const made = await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'default' } });
    expect(made.metadata?.uid).toBeDefined();
    expect(statuses(server)).toEqual([['POST', 'Bearer old'], ['POST', 'Bearer new']]);
    expect(await bearer(kc)).toBe('Bearer new');
  });

  it('fails loudly, at once, when the file still holds the refused token: a 401 naming the token file, one request', async () => {
    const { server, kc } = await setUp();
    server.acceptTokens('another');
    const client = newResourceClient(kc, resources.configmaps);
    const err = await client.get('a', 'default').then(
      () => undefined,
      (e: unknown) => e as Error & { statusCode?: number },
    );
    expect(err?.statusCode).toBe(401);
    expect(err?.message).toMatch(/HTTP 401 Unauthorized.*\(the service-account token file .*\/token still holds the credentials that were refused\)$/);
    expect(statuses(server)).toEqual([['GET', 'Bearer old']]);
  });

  it('fails loudly when the token read again is refused too: two requests, never a loop', async () => {
    const { server, mount, kc } = await setUp();
    mount.write({ token: 'newer-but-unbound', 'ca.crt': CA });
    server.acceptTokens('another');
    const client = newResourceClient(kc, resources.configmaps);
    await expect(client.list({ namespace: 'default' })).rejects.toMatchObject({
      statusCode: 401,
      message: expect.stringMatching(/\(the credentials read again from the service-account token file .*\/token were refused too\)$/) as unknown,
    });
    expect(statuses(server)).toEqual([['GET', 'Bearer old'], ['GET', 'Bearer newer-but-unbound']]);
  });

  it('a watch that reconnects after the token changed resumes with the new token: no relist, one 401', async () => {
    const { server, mount, kc } = await setUp();
    server.create(resources.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'before', namespace: 'default' } });
    const factory = new SharedInformerFactory(kc, { logger: false });
    const informer = factory.forResource(resources.configmaps);
    const controller = new AbortController();
    cleanups.push(() => factory.shutdown());
    cleanups.push(() => controller.abort());
    factory.start(controller.signal);
    await factory.waitForCacheSync(controller.signal);
    await expect.poll(() => server.openWatches()).toBe(1);
    // An event on the open watch (a watch that ends having delivered none relists, token or not).
    server.create(resources.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'during', namespace: 'default' } });
    await expect.poll(() => informer.getStore().listKeys().length).toBe(2);
    // Rotation: the kubelet rewrites the file, the old token's binding object is deleted.
    mount.write({ token: 'new', 'ca.crt': CA });
    server.acceptTokens('new');
    server.endWatches();
    server.create(resources.configmaps, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'after', namespace: 'default' } });
    await expect.poll(() => informer.getStore().listKeys().sort(), { timeout: 5_000 }).toEqual(['default/after', 'default/before', 'default/during']);
    const seen = server.requests().map((r) => `${r.query.watch === 'true' ? 'watch' : 'list'} ${r.authorization}`);
    // The list was streamed (useWatchList 'auto'): the first watch brought the initial state.
    expect(seen).toEqual(['watch Bearer old', 'watch Bearer old', 'watch Bearer new']);
    expect(informer.health().counters).toMatchObject({ lists: 1, relists: 0, errors: 0 });
  });
});

describe('loadKubeConfig', () => {
  const FILE = (server: string, context = 'c'): string =>
    `apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: ${server}\nusers:\n- name: u\n  user:\n    token: t\ncontexts:\n- name: ${context}\n  context:\n    cluster: c\n    user: u\ncurrent-context: ${context}\n`;

  it('takes the in-cluster configuration when KUBERNETES_SERVICE_HOST is set, else the kubeconfig file, KUBECONFIG, ~/.kube/config', () => {
    const mount = new Mount({ token: 'tok', 'ca.crt': CA });
    const inPod = loadKubeConfig({ root: mount.root, env: { KUBERNETES_SERVICE_HOST: '10.0.0.1', KUBERNETES_SERVICE_PORT: '443' }, logger: false });
    expect(inPod.getCurrentCluster()?.server).toBe('https://10.0.0.1:443');
    const dir = mkdtempSync(join(tmpdir(), 'kube-informer-kc-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'a'), FILE('https://a.example:6443'));
    writeFileSync(join(dir, 'b'), FILE('https://b.example:6443', 'other'));
    mkdirSync(join(dir, 'home', '.kube'), { recursive: true });
    writeFileSync(join(dir, 'home', '.kube', 'config'), FILE('https://home.example'));
    expect(loadKubeConfig({ kubeconfig: join(dir, 'a'), env: { KUBERNETES_SERVICE_HOST: '10.0.0.1' } }).getCurrentCluster()?.server).toBe('https://a.example:6443');
    expect(loadKubeConfig({ env: { KUBECONFIG: `${join(dir, 'missing')}:${join(dir, 'b')}` } }).getCurrentCluster()?.server).toBe('https://b.example:6443');
    expect(loadKubeConfig({ env: { HOME: join(dir, 'home') } }).getCurrentCluster()?.server).toBe('https://home.example');
    expect(loadKubeConfig({ kubeconfig: join(dir, 'b'), context: 'other' }).getCurrentContext()).toBe('other');
  });

  it('names the file that is missing or the context that is not there; no fallback to localhost:8080', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-informer-kc-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'a'), FILE('https://a.example'));
    expect(caught(() => loadKubeConfig({ env: { HOME: dir } }))).toMatchObject({ code: ErrorCodes.KUBECONFIG, message: `the kubeconfig file ${join(dir, '.kube', 'config')} does not exist` });
    expect(caught(() => loadKubeConfig({ kubeconfig: join(dir, 'nope') })).message).toBe(`the kubeconfig file ${join(dir, 'nope')} does not exist`);
    expect(caught(() => loadKubeConfig({ kubeconfig: join(dir, 'a'), context: 'x' })).message).toBe(`the kubeconfig ${join(dir, 'a')} has no context "x" (it has: c)`);
    expect(caught(() => loadKubeConfig({ kubeconfg: 'a' } as never)).code).toBe(ErrorCodes.INVALID_OPTION);
  });
});

