// kubeconfigSecrets: clusters from kubeconfig Secrets of a management cluster (issue 51), on fake API servers, reported to a recording sink.
import { createServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { Secret } from 'kubernetes-types/core/v1.js';
import { ClusterRefusedError, ErrorCodes, InvalidOptionError, resources, type ClusterRefusal } from '../../src/core/index.js';
import { SharedInformerFactory } from '../../src/index.js';
import { newResourceClient, type KubeConfigLike } from '../../src/listwatch/index.js';
import { clusterApiKubeconfigSecrets, kubeconfigSecrets, KUBECONFIG_SECRET_LABEL, type ClusterSink, type KubeconfigSecretsProvider } from '../../src/operations/index.js';
import { FakeClock, startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { until } from '../examples/helpers.js';
import { kubeConfigFor } from '../listwatch/helpers.js';
import { failOnUnhandledRejections } from '../helpers/async.js';
import { kubeconfigText } from '../helpers/kubeconfig.js';

failOnUnhandledRejections();

const cleanups: Array<() => unknown> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The manager's side, recorded: engage throws INVALID_OPTION for a name engaged from another source, as the contract says. */
class RecordingSink implements ClusterSink {
  readonly events: string[] = [];
  readonly engaged = new Map<string, { kubeConfig: KubeConfigLike; source: string }>();
  readonly refusals: Array<{ name: string | undefined; error: Error; source: string | undefined }> = [];
  engage(name: string, kubeConfig: KubeConfigLike, source = 'unknown'): void {
    const now = this.engaged.get(name);
    if (now !== undefined && now.source !== source) throw new InvalidOptionError(`cluster ${name} is engaged from ${now.source}; ${source} names it too`);
    this.engaged.set(name, { kubeConfig, source });
    this.events.push(`engage ${name} from ${source}`);
  }
  disengage(name: string, reason?: string): void {
    this.engaged.delete(name);
    this.events.push(`disengage ${name}: ${reason}`);
  }
  refuse(name: string | undefined, error: Error, source?: string): void {
    this.refusals.push({ name, error, source });
    this.events.push(`refuse ${name} from ${source}: ${(error as ClusterRefusedError).reason}`);
  }
}

async function server(options: { token?: string } = {}): Promise<FakeApiServer> {
  const s = await startFakeApiServer({ logger: false, ...(options.token === undefined ? {} : { token: options.token, requireToken: true }) });
  cleanups.push(() => s.close());
  return s;
}

/** A kubeconfig (the text a Secret holds) for the fake server at `port`, with `user`. */
function kubeconfig(port: number, user: Record<string, unknown> = { token: 'fake-token' }): string {
  return kubeconfigText({ server: `http://127.0.0.1:${port}`, user });
}

const b64 = (text: string): string => Buffer.from(text).toString('base64');

function secret(name: string, data: Record<string, string>, labels: Record<string, string> = { [KUBECONFIG_SECRET_LABEL]: 'true' }): Secret {
  const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b64(v)]));
  return { apiVersion: 'v1', kind: 'Secret', metadata: { name, namespace: 'fleet', labels }, data: encoded };
}

/** A management cluster, a provider on it running into a recording sink, and its Secrets client. */
async function running(make: (factory: SharedInformerFactory) => KubeconfigSecretsProvider = (factory) => kubeconfigSecrets({ factory, namespace: 'fleet' })) {
  const management = await server();
  const factory = new SharedInformerFactory(management.kubeConfig, { logger: false });
  const provider = make(factory);
  const sink = new RecordingSink();
  const stop = new AbortController();
  const done = provider.run(stop.signal, sink);
  cleanups.push(async () => {
    stop.abort();
    await done;
    await factory.shutdown();
  });
  const secrets = newResourceClient(management.kubeConfig, resources.secrets);
  cleanups.push(() => secrets.close());
  return { provider, sink, secrets, stop, done };
}

/** The names of the ConfigMaps in `default` of the cluster `kubeConfig` reaches: which cluster it is. */
async function configMapsOf(kubeConfig: KubeConfigLike): Promise<string[]> {
  const client = newResourceClient(kubeConfig, resources.configmaps);
  try {
    return (await client.list({ namespace: 'default' })).items.map((c) => c.metadata?.name ?? '');
  } finally {
    client.close();
  }
}

async function clusterWith(configMap: string, options: { token?: string } = {}): Promise<FakeApiServer> {
  const s = await server(options);
  const client = newResourceClient(s.kubeConfig, resources.configmaps);
  await client.create({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: configMap, namespace: 'default' } });
  client.close();
  return s;
}

const refusedFor = (sink: RecordingSink, reason: ClusterRefusal): ClusterRefusedError[] =>
  sink.refusals.map((r) => r.error as ClusterRefusedError).filter((e) => e.reason === reason);

describe('kubeconfigSecrets', () => {
  it("engages the cluster of a labelled Secret, whose kubeconfig reaches that cluster; a Secret without the label is not seen", async () => {
    const east = await clusterWith('in-east');
    const { sink, secrets, provider } = await running();
    await secrets.create(secret('unlabelled', { kubeconfig: kubeconfig(east.port) }, {}));
    await secrets.create(secret('east', { kubeconfig: kubeconfig(east.port) }));
    await until(() => sink.events.length >= 1, 'the engage');
    expect(sink.events).toEqual(['engage east from secret fleet/east']);
    expect(await configMapsOf(sink.engaged.get('east')!.kubeConfig)).toEqual(['in-east']);
    expect(provider.stats()).toMatchObject({ engaged: { east: 'fleet/east' }, engages: 1, disengages: 0 });
  });

  it('re-engages when the kubeconfig changes (now reaching the other cluster), not when anything else does; disengages when the Secret is deleted', async () => {
    const east = await clusterWith('in-east');
    const west = await clusterWith('in-west');
    const { sink, secrets } = await running();
    const created = await secrets.create(secret('edge', { kubeconfig: kubeconfig(east.port) }));
    await until(() => sink.events.length >= 1, 'the engage');
    const relabelled = await secrets.update({ ...created, metadata: { ...created.metadata, annotations: { note: 'unrelated' } } });
    // Secrets are handled in the order their changes came: once a later one's cluster is engaged, the annotation was handled.
    await secrets.create(secret('marker', { kubeconfig: kubeconfig(east.port) }));
    await until(() => sink.engaged.has('marker'), 'the marker engaged');
    await secrets.update({ ...relabelled, data: { kubeconfig: b64(kubeconfig(west.port)) } });
    await until(() => sink.events.length >= 3, 'the re-engage');
    expect(await configMapsOf(sink.engaged.get('edge')!.kubeConfig)).toEqual(['in-west']);
    await secrets.delete('edge', 'fleet');
    await until(() => sink.events.length >= 4, 'the disengage');
    expect(sink.events).toEqual(['engage edge from secret fleet/edge', 'engage marker from secret fleet/marker', 'engage edge from secret fleet/edge', 'disengage edge: secret fleet/edge was deleted']);
    expect([...sink.engaged.keys()]).toEqual(['marker']);
  });

  it('refuses a Secret without the key, naming the key and the keys it has; counted once, engaged once the key is there', async () => {
    const east = await clusterWith('in-east');
    const { sink, secrets, provider } = await running();
    const created = await secrets.create(secret('east', { config: kubeconfig(east.port), token: 'x' }));
    await until(() => sink.events.length >= 1, 'the refusal');
    const [error] = refusedFor(sink, 'missing-key');
    expect(error.code).toBe(ErrorCodes.CLUSTER_REFUSED);
    expect(error.message).toBe('secret fleet/east has no data key "kubeconfig" (it has: config, token): cluster "east" not engaged');
    expect(sink.refusals[0]).toMatchObject({ name: 'east', source: 'secret fleet/east' });
    const touched = await secrets.update({ ...created, metadata: { ...created.metadata, annotations: { again: 'yes' } } });
    await secrets.update({ ...touched, data: { kubeconfig: b64(kubeconfig(east.port)) } });
    await until(() => sink.events.length >= 2, 'the engage');
    expect(sink.events).toEqual(['refuse east from secret fleet/east: missing-key', 'engage east from secret fleet/east']);
    expect(provider.stats().refused['missing-key']).toBe(1);
  });

  it('refuses a kubeconfig that does not parse, has no server, or names a file or a command of this host: never engaged', async () => {
    const east = await clusterWith('in-east');
    const { sink, secrets, provider } = await running();
    await secrets.create(secret('yaml', { kubeconfig: 'clusters: [unclosed' }));
    await secrets.create(secret('serverless', { kubeconfig: kubeconfig(east.port).replace(/server: .*/, 'insecure-skip-tls-verify: true') }));
    await secrets.create(secret('exec', { kubeconfig: kubeconfig(east.port, { exec: { command: '/bin/sh', apiVersion: 'client.authentication.k8s.io/v1' } }) }));
    await secrets.create(secret('cafile', { kubeconfig: kubeconfig(east.port).replace('server:', 'certificate-authority: /etc/ssl/ca.pem\n    server:') }));
    await secrets.create(secret('keyfile', { kubeconfig: kubeconfig(east.port, { 'client-certificate': '/var/run/c.pem', 'client-key': '/var/run/k.pem' }) }));
    await until(() => sink.events.length >= 5, 'five refusals');
    expect(sink.engaged.size).toBe(0);
    const messages = refusedFor(sink, 'unparsable').map((e) => e.message);
    expect(messages).toHaveLength(5);
    expect(messages[0]).toMatch(/^secret fleet\/yaml, key "kubeconfig": the kubeconfig secret fleet\/yaml cannot be loaded: .*: cluster "yaml" not engaged$/s);
    expect(messages[1]).toBe('secret fleet/serverless, key "kubeconfig": the kubeconfig secret fleet/serverless: cluster "c" has no server: cluster "serverless" not engaged');
    expect(messages[2]).toContain('user "u" has exec, which a kubeconfig not read from this host may not have');
    expect(messages[3]).toContain('cluster "c" names a file (certificate-authority), which a kubeconfig not read from this host may not');
    expect(messages[4]).toContain('user "u" has client-certificate, client-key, which a kubeconfig not read from this host may not have');
    expect(provider.stats().refused.unparsable).toBe(5);
  });

  it('refuses a cluster whose server answers 401 to its credentials; engages it once the Secret holds credentials the server accepts', async () => {
    const guarded = await clusterWith('in-guarded', { token: 'right' });
    const { sink, secrets, provider } = await running();
    const created = await secrets.create(secret('guarded', { kubeconfig: kubeconfig(guarded.port, { token: 'wrong' }) }));
    await until(() => sink.events.length >= 1, 'the refusal');
    const [error] = refusedFor(sink, 'unauthorized');
    expect(error.message).toBe(`secret fleet/guarded: the server http://127.0.0.1:${guarded.port} refused its credentials (401 Unauthorized): cluster "guarded" not engaged`);
    expect(sink.engaged.size).toBe(0);
    await secrets.update({ ...created, data: { kubeconfig: b64(kubeconfig(guarded.port, { token: 'right' })) } });
    await until(() => sink.events.length >= 2, 'the engage');
    expect(await configMapsOf(sink.engaged.get('guarded')!.kubeConfig)).toEqual(['in-guarded']);
    expect(provider.stats().refused.unauthorized).toBe(1);
  });

  it("engages a cluster whose server does not answer the check within verifyTimeoutMs, or cannot be reached: unreachable is not refused, it is the manager's to report", async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket)); // accepts, never answers
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise((resolve) => (sockets.forEach((x) => x.destroy()), silent.close(resolve))));
    const silentPort = (silent.address() as { port: number }).port;
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as { port: number }).port;
    await new Promise((resolve) => closed.close(resolve)); // nothing listens there now
    const clock = new FakeClock();
    const { sink, secrets } = await running((factory) => kubeconfigSecrets({ factory, namespace: 'fleet', clock, verifyTimeoutMs: 5_000 }));
    await secrets.create(secret('silent', { kubeconfig: kubeconfig(silentPort) }));
    await until(() => sockets.length === 1 && clock.pendingTimers() === 1, 'the check sent and its timer set');
    await clock.advance(4_999);
    expect(sink.events).toEqual([]);
    await clock.advance(1);
    await until(() => sink.events.length >= 1, 'the engage after the timeout');
    await secrets.create(secret('closed', { kubeconfig: kubeconfig(closedPort) }));
    await until(() => sink.events.length >= 2, 'the engage of the closed port');
    expect(sink.events).toEqual(['engage silent from secret fleet/silent', 'engage closed from secret fleet/closed']);
  });

  it('refuses a second Secret naming an engaged cluster; the first keeps it, and the second takes it when the first is deleted', async () => {
    const east = await clusterWith('in-east');
    const west = await clusterWith('in-west');
    const { sink, secrets } = await running((factory) => kubeconfigSecrets({ factory, namespace: 'fleet', clusterName: (s) => s.metadata?.labels?.cluster }));
    const labels = { [KUBECONFIG_SECRET_LABEL]: 'true', cluster: 'prod' };
    await secrets.create(secret('a', { kubeconfig: kubeconfig(east.port) }, labels));
    await until(() => sink.events.length >= 1, 'the engage');
    await secrets.create(secret('b', { kubeconfig: kubeconfig(west.port) }, labels));
    await until(() => sink.events.length >= 2, 'the refusal');
    expect(refusedFor(sink, 'duplicate')[0].message).toBe('secret fleet/b names cluster "prod", which secret fleet/a engaged first: not engaged (it is tried again when secret fleet/a lets the name go)');
    expect(await configMapsOf(sink.engaged.get('prod')!.kubeConfig)).toEqual(['in-east']);
    await secrets.delete('a', 'fleet');
    await until(() => sink.events.length >= 4, 'the hand-over');
    expect(sink.events.slice(2)).toEqual(['disengage prod: secret fleet/a was deleted', 'engage prod from secret fleet/b']);
    expect(await configMapsOf(sink.engaged.get('prod')!.kubeConfig)).toEqual(['in-west']);
  });

  it('refuses a Secret naming a cluster engaged from another provider (the sink throws): the other one is untouched', async () => {
    const east = await clusterWith('in-east');
    const { sink, secrets, provider } = await running();
    const other = { getCurrentCluster: () => null, getCurrentUser: () => null, applyToHTTPSOptions: async () => undefined };
    sink.engage('east', other, 'static');
    await secrets.create(secret('east', { kubeconfig: kubeconfig(east.port) }));
    await until(() => sink.events.length >= 2, 'the refusal');
    expect(refusedFor(sink, 'conflict')[0].message).toBe('secret fleet/east: cluster "east" was not engaged: cluster east is engaged from static; secret fleet/east names it too');
    expect(sink.engaged.get('east')!.source).toBe('static');
    expect(provider.stats().engaged).toEqual({});
  });

  it("refuses a Secret whose clusterName gives no name, and ignores one it answers null for", async () => {
    const east = await clusterWith('in-east');
    const { sink, secrets, provider } = await running((factory) => kubeconfigSecrets({ factory, namespace: 'fleet', clusterName: (s) => (s.metadata?.name === 'skip' ? null : s.metadata?.labels?.cluster) }));
    await secrets.create(secret('skip', { kubeconfig: kubeconfig(east.port) }));
    await secrets.create(secret('nameless', { kubeconfig: kubeconfig(east.port) }));
    await until(() => sink.events.length >= 1, 'the refusal');
    expect(sink.refusals).toHaveLength(1);
    expect(sink.refusals[0]).toMatchObject({ name: undefined, source: 'secret fleet/nameless' });
    expect(sink.refusals[0].error.message).toBe('secret fleet/nameless names no cluster (clusterName answered undefined): not engaged');
    expect(provider.stats()).toMatchObject({ ignored: 1, engages: 0 });
  });

  it("reads Cluster API's Secrets: <cluster>-kubeconfig, data key value, the cluster-name label; the cluster's other Secrets ignored", async () => {
    const east = await clusterWith('in-east');
    const { sink, secrets, provider } = await running((factory) => clusterApiKubeconfigSecrets({ factory, namespace: 'fleet' }));
    const labels = { 'cluster.x-k8s.io/cluster-name': 'east' };
    await secrets.create(secret('east-ca', { 'tls.crt': 'x', 'tls.key': 'y' }, labels));
    await secrets.create(secret('east-user-kubeconfig', { value: kubeconfig(east.port) }, labels));
    await secrets.create(secret('east-kubeconfig', { value: kubeconfig(east.port) }, labels));
    await until(() => sink.events.length >= 1, 'the engage');
    expect(sink.events).toEqual(['engage east from secret fleet/east-kubeconfig']);
    await until(() => provider.stats().ignored === 2, 'the two other Secrets ignored');
    expect(provider.name).toBe('cluster-api-kubeconfigs');
  });

  it('runs once, and refuses options it does not know or cannot use', async () => {
    const { provider, sink } = await running();
    await expect(provider.run(new AbortController().signal, sink)).rejects.toMatchObject({ code: ErrorCodes.ALREADY_STARTED });
    const factory = new SharedInformerFactory(kubeConfigFor('https://127.0.0.1:1'), { logger: false });
    expect(() => kubeconfigSecrets({ factory, key: '' })).toThrow('kubeconfigSecrets: option key must not be empty');
    expect(() => kubeconfigSecrets({ factory, labelSelector: 'a in (' })).toThrow(/kubeconfigSecrets/);
    expect(() => clusterApiKubeconfigSecrets({ factory, key: 'kubeconfig' } as never)).toThrow("clusterApiKubeconfigSecrets: option key is Cluster API's here; use kubeconfigSecrets to choose it");
  });
});
