// The configmapset operator on the fake API server: the scenario, what it writes, a taken name, a restart in the middle of a cleanup, and main as a process.

import { request as httpsRequest } from 'node:https';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { newResourceClient, resources, type KubeObject } from '../../src/index.js';
import { FakeClock, type FakeApiServer } from '../../src/testing/index.js';
import { awaitConverged, type ConfigMapSetSnapshot } from '../../examples/configmapset/consistency.js';
import { API_VERSION, configMapSets, FINALIZER, GROUP, SET_LABEL, type ConfigMapSet } from '../../examples/configmapset/crd.js';
import { configMapSetWebhookServer } from '../../examples/configmapset/webhooks.js';
import { ConfigMapSetOperator, type ConfigMapSetOperatorOptions } from '../../examples/configmapset/operator.js';
import { FileRegistry } from '../../examples/configmapset/registry.js';
import { configMapSet, runScenario } from '../../examples/configmapset/scenario.js';
import { eventsV1Resource } from '../../src/operations/index.js';
import { metricValue } from '../operations/prom.js';
import { HangingRegistry, runExample, startExampleCluster, until } from './helpers.js';

const NS = 'demo';

/** POSTs `body` as JSON over HTTPS, trusting the CA `caBundle` (base64 PEM); resolves with the JSON answer. */
function postJson(url: string, body: unknown, caBundle: string): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(url, { method: 'POST', ca: Buffer.from(caBundle, 'base64'), headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve(JSON.parse(text)));
    });
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
}

interface Running {
  operator: ConfigMapSetOperator;
  stop: AbortController;
  outcome: { done: boolean; error: unknown };
  running: Promise<void>;
}

describe('the configmapset operator', () => {
  let server: FakeApiServer;
  let registry: FileRegistry & { dispose(): Promise<void> };
  let operators: Running[];

  beforeEach(async () => {
    server = await startExampleCluster();
    server.resource({ ...configMapSets, generation: true });
    registry = await FileRegistry.temporary();
    operators = [];
  });
  afterEach(async () => {
    for (const o of operators) o.stop.abort();
    await Promise.all(operators.map((o) => o.running));
    await server.close();
    await registry.dispose();
  });

  function start(options: Partial<ConfigMapSetOperatorOptions> = {}): Running {
    const operator = new ConfigMapSetOperator(server.kubeConfig, {
      registry,
      namespace: NS,
      logger: false,
      // A relist waits out the reflector's backoff (800 ms by default): make it immediate.
      informerOptions: { reflector: { backoff: { initialMs: 1, maxMs: 5 } } },
      ...options,
    });
    const stop = new AbortController();
    const outcome = { done: false, error: undefined as unknown };
    const running = operator.run(stop.signal).then(
      () => void (outcome.done = true),
      (error: unknown) => void Object.assign(outcome, { done: true, error }),
    );
    const r = { operator, stop, outcome, running };
    operators.push(r);
    return r;
  }

  /** Waits (bounded) until the server state is converged and `expect` holds; fails with the difference otherwise. */
  async function converged(expectation?: (s: ConfigMapSetSnapshot) => string | undefined): Promise<void> {
    const result = await awaitConverged({ kubeConfig: server.kubeConfig, namespace: NS, registry, timeoutMs: 10_000, intervalMs: 5, expect: expectation });
    expect(result.difference).toBeUndefined();
  }

  const getSet = (name: string): ConfigMapSet | undefined => server.get<ConfigMapSet & { metadata: object }>(configMapSets, name, NS);
  const configMaps = (): ConfigMap[] => server.list<ConfigMap & { metadata: object }>('configmaps', NS);
  const statusWrites = (): number => server.requests().filter((r) => r.method === 'PATCH' && r.path.endsWith('/status')).length;

  it('runs the scenario: every step converges, and deleting the sets empties the registry and leaves no ConfigMaps', async () => {
    const { operator, outcome } = start();
    const lines: string[] = [];
    const result = await runScenario({ kubeConfig: server.kubeConfig, namespace: NS, registry, log: (l) => lines.push(l), stepTimeoutMs: 10_000 });
    expect(result.steps.filter((s) => !s.converged)).toEqual([]);
    expect(result.passed).toBe(true);
    expect(result.steps).toHaveLength(6);
    expect(lines.at(-1)).toMatch(/converged in \d+ ms; registry: empty/);
    expect(server.list(configMapSets, NS)).toEqual([]);
    expect(configMaps()).toEqual([]);
    expect(await registry.all()).toEqual({});
    const stats = operator.stats();
    expect(stats.failed).toBe(0);
    expect(stats.finalizers).toEqual({ added: 2, removed: 2 });
    expect(stats.cleanups).toBe(2);
    // created: web-frontend, web-backend, db-primary, web-worker, web-frontend again (deleted by hand).
    expect(stats.configMaps).toEqual({ created: 5, updated: 2, deleted: 4 });
    expect(outcome.done).toBe(false);
    // Its metrics: controller-runtime's names for the controller, kube_informer_* for its informers.
    expect(await metricValue(operator.metrics, 'controller_runtime_reconcile_total', { controller: 'configmapsets', result: 'success' })).toBe(stats.succeeded);
    expect(await metricValue(operator.metrics, 'controller_runtime_reconcile_errors_total', { controller: 'configmapsets' })).toBe(0);
    expect(await metricValue(operator.metrics, 'kube_informer_synced', { informer: 'examples.kube-informer.dev/v1/configmapsets' })).toBe(1);
    // Its caches equal the server; each deletion left a CleanedUp Event.
    for (const audit of operator.audits) expect((await audit.audit()).divergent).toBe(0);
    expect(await metricValue(operator.metrics, 'kube_informer_drift_audits_total', { informer: 'v1/configmaps', result: 'clean' })).toBe(1);
    await until(() => server.list<KubeObject & { reason?: string }>(eventsV1Resource, NS).filter((e) => e.reason === 'CleanedUp').length === 2, 'two CleanedUp Events');
  });

  it('traces through its Manager (option tracerProvider): each reconcile a span, linked to the watch events that caused it, with a child span per write', async () => {
    const exporter = new InMemorySpanExporter();
    const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
    const { operator } = start({ manager: { tracerProvider: provider } });
    await until(() => operator.controller.stats().active, 'the controller');
    server.create(configMapSets, configMapSet('traced', NS, { names: ['a'] }) as ConfigMapSet & KubeObject);
    await converged((snapshot) => (snapshot.configMaps.length === 1 ? undefined : `${snapshot.configMaps.length} ConfigMaps`));
    const ofSet = (): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.name === 'reconcile configmapsets' && span.attributes['kube_informer.key'] === `${NS}/traced`);
    const writesUnder = (parent: ReadableSpan): ReadableSpan[] => exporter.getFinishedSpans().filter((span) => span.parentSpanContext?.spanId === parent.spanContext().spanId);
    await until(() => ofSet().some((span) => writesUnder(span).length > 0), 'a reconcile span of demo/traced with its writes');
    expect(ofSet()[0]!.links.length).toBeGreaterThan(0); // the first ran for the set's add
    expect(operator.controller.stats().tracingFaults).toBe(0);
  });

  it('serves /readyz and /metrics through its manager when given probes', async () => {
    const operator = new ConfigMapSetOperator(server.kubeConfig, { registry, namespace: NS, logger: false, probes: { port: 0, host: '127.0.0.1' } });
    const stop = new AbortController();
    const running = operator.run(stop.signal);
    await until(() => operator.probeUrl !== undefined && operator.controller.stats().active, 'the probe server and the controller');
    expect((await fetch(`${operator.probeUrl}/readyz`)).status).toBe(200);
    const metrics = await (await fetch(`${operator.probeUrl}/metrics`)).text();
    expect(metrics).toContain('controller_runtime_max_concurrent_reconciles{controller="configmapsets"} 2');
    expect(metrics).toContain('kube_informer_lists_total{informer="v1/configmaps"} 1');
    stop.abort();
    await running;
    expect(operator.probeUrl).toBeUndefined();
  });

  it('serves its webhooks under its Manager: a review over HTTPS is answered while it runs, and the server stops with it', async () => {
    const webhookServer = configMapSetWebhookServer({ port: 0, logger: false });
    const { stop, running } = start({ webhookServer });
    await until(() => webhookServer.ready(), 'the webhook server');
    const review = {
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      request: {
        uid: 'u1',
        kind: { group: GROUP, version: 'v1', kind: 'ConfigMapSet' },
        resource: { group: GROUP, version: 'v1', resource: 'configmapsets' },
        operation: 'CREATE',
        userInfo: {},
        object: configMapSet('dup', NS, { names: ['a', 'a'] }),
      },
    };
    const answer = await postJson(`https://127.0.0.1:${webhookServer.port()}/validate-configmapsets`, review, webhookServer.caBundle()!);
    expect(answer).toMatchObject({ response: { uid: 'u1', allowed: false, status: { details: { causes: [{ field: 'spec.names[1]', reason: 'FieldValueDuplicate' }] } } } });
    stop.abort();
    await running;
    expect(webhookServer.ready()).toBe(false);
  });

  it('writes one ConfigMap per name with the data, its label and a controller owner reference, and the status through the status subresource', async () => {
    const created = server.create(configMapSets, configMapSet('web', NS, { names: ['a', 'b'], data: { k: 'v' } }) as ConfigMapSet & KubeObject);
    expect(created.metadata?.generation).toBe(1);
    start();
    await converged();
    const cms = configMaps();
    expect(cms.map((cm) => cm.metadata?.name)).toEqual(['web-a', 'web-b']);
    expect(cms[0]).toMatchObject({
      metadata: { labels: { [SET_LABEL]: 'web' }, ownerReferences: [{ apiVersion: API_VERSION, kind: 'ConfigMapSet', name: 'web', uid: created.metadata?.uid, controller: true }] },
      data: { k: 'v' },
    });
    expect(getSet('web')).toMatchObject({
      metadata: { finalizers: [FINALIZER] },
      status: { observedGeneration: 1, ready: 2, conditions: [{ type: 'Ready', status: 'True', reason: 'AllConfigMapsWritten', observedGeneration: 1 }] },
    });
    expect(await registry.get(`${NS}/web`)).toEqual({ namespace: NS, name: 'web', uid: created.metadata?.uid, configMaps: ['web-a', 'web-b'] });
    expect(statusWrites()).toBe(1);

    const current = getSet('web')!;
    expect(current.metadata?.generation).toBe(1); // the finalizer and status writes kept it
    server.update(configMapSets, { ...current, spec: { names: ['b'], data: { k: 'w' } } });
    await converged((s) => (s.sets[0]?.status?.observedGeneration === 2 ? undefined : 'generation 2 not observed yet'));
    expect(configMaps().map((cm) => [cm.metadata?.name, cm.data])).toEqual([['web-b', { k: 'w' }]]);
    expect(getSet('web')?.status).toMatchObject({ observedGeneration: 2, ready: 1 });
    // Its own status writes (same generation) woke no further reconcile that wrote anything.
    expect(statusWrites()).toBe(2);
  });

  it('writes with server-side apply: a value edited by hand is taken back, a key someone else added stays theirs, a key the set drops is removed', async () => {
    server.create(configMapSets, configMapSet('web', NS, { names: ['a'], data: { color: 'blue', size: 'L' } }));
    start();
    await converged();
    const cm = (): ConfigMap | undefined => configMaps().find((c) => c.metadata?.name === 'web-a');
    expect(cm()?.metadata?.managedFields).toEqual([expect.objectContaining({ manager: 'configmapset-operator', operation: 'Apply' })]);
    expect(getSet('web')?.metadata?.managedFields).toContainEqual(expect.objectContaining({ manager: 'configmapset-operator', operation: 'Apply', subresource: 'status' }));

    // A hand edit: color changed (the operator's field), a key added (someone else's).
    const user = newResourceClient(server.kubeConfig, resources.configmaps, { fieldManager: 'kubectl-edit' });
    await user.patch('web-a', NS, { data: { color: 'red', extra: 'x' } }, 'merge');
    user.close();
    await until(() => cm()?.data?.color === 'blue', 'the color taken back');
    expect(cm()?.data).toEqual({ color: 'blue', size: 'L', extra: 'x' });
    await converged();

    // The set drops size: the apply without it removes it (the operator owned it); extra is not the operator's to remove.
    server.update(configMapSets, { ...getSet('web')!, spec: { names: ['a'], data: { color: 'blue' } } });
    await converged((s) => (s.sets[0]?.status?.observedGeneration === 2 ? undefined : 'generation 2 not observed yet'));
    expect(cm()?.data).toEqual({ color: 'blue', extra: 'x' });
  });

  it('never takes over a ConfigMap it does not own: the set reports NameTaken and creates it once the name is free', async () => {
    const clock = new FakeClock();
    server.create('configmaps', { metadata: { name: 'web-a', namespace: NS }, data: { theirs: 'yes' } });
    server.create(configMapSets, configMapSet('web', NS, { names: ['a', 'b'], data: { k: 'v' } }));
    start({ controller: { clock } });
    await until(() => getSet('web')?.status?.conditions?.[0]?.reason === 'NameTaken', 'the NameTaken condition');
    expect(getSet('web')?.status).toMatchObject({ ready: 1, conditions: [{ type: 'Ready', status: 'False', message: expect.stringContaining('web-a') as string }] });
    expect(configMaps().find((cm) => cm.metadata?.name === 'web-a')).toMatchObject({ data: { theirs: 'yes' } });
    expect(configMaps().find((cm) => cm.metadata?.name === 'web-a')?.metadata?.ownerReferences).toBeUndefined();

    // The operator says so in an Event too (what `kubectl events` shows).
    await until(() => server.list<KubeObject & { reason?: string }>(eventsV1Resource, NS).some((e) => e.reason === 'NameTaken'), 'the NameTaken Event');
    const event = server.list<KubeObject & { type?: string; regarding?: { name?: string }; note?: string }>(eventsV1Resource, NS).find((e) => e.metadata?.name?.startsWith('web.'));
    expect(event).toMatchObject({ type: 'Warning', regarding: { name: 'web' }, note: expect.stringContaining('web-a') as string });

    server.delete('configmaps', 'web-a', NS);
    await clock.advance(10_000); // the requeue of a set with a taken name
    await converged();
    expect(getSet('web')?.status?.conditions?.[0]).toMatchObject({ status: 'True', reason: 'AllConfigMapsWritten' });
  });

  it('a ConfigMap the API refuses as invalid (422) is a TerminalError: counted, not retried, reconciled again on the next change of the set', async () => {
    const clock = new FakeClock();
    server.injectFault({ verb: 'patch', resource: 'configmaps', type: 'status', code: 422 });
    server.create(configMapSets, configMapSet('web', NS, { names: ['a'], data: { k: 'v' } }));
    const { operator } = start({ controller: { clock } });
    await until(() => operator.stats().terminal === 1, 'the terminal failure');
    const creates = (): number => server.requests().filter((r) => r.method === 'PATCH' && r.path.endsWith('/configmaps/web-a')).length;
    expect(creates()).toBe(1);
    await clock.advance(60_000);
    expect(creates()).toBe(1);
    expect(operator.stats()).toMatchObject({ failed: 1, failing: 1 });
    server.update(configMapSets, { ...getSet('web')!, spec: { names: ['a'], data: { k: 'v2' } } });
    await converged();
    expect(operator.stats()).toMatchObject({ terminal: 1, failing: 0 });
  });

  it('the operator restarted mid-cleanup: the new instance runs the cleanup, removes the finalizer and leaves nothing orphaned', async () => {
    const hanging = new HangingRegistry(registry);
    const first = start({ registry: hanging });
    server.create(configMapSets, configMapSet('web', NS, { names: ['a', 'b', 'c'], data: { k: 'v' } }));
    await converged();
    expect(configMaps()).toHaveLength(3);

    server.delete(configMapSets, 'web', NS); // marked: the finalizer holds it
    expect(getSet('web')?.metadata?.deletionTimestamp).toBeDefined();
    await until(() => hanging.removeCalls > 0, 'the cleanup to reach the external registry');
    first.stop.abort(); // the operator stops while its cleanup hangs
    await first.running;
    expect(first.outcome.error).toBeUndefined();
    expect(first.operator.stats().cleanups).toBe(0);
    // Nothing was half-done: the set is still held by the finalizer, its ConfigMaps and its record are there.
    expect(getSet('web')?.metadata).toMatchObject({ finalizers: [FINALIZER], deletionTimestamp: expect.any(String) as string });
    expect(configMaps()).toHaveLength(3);
    expect(Object.keys(await registry.all())).toEqual([`${NS}/web`]);

    const second = start(); // a new instance, the same external registry
    await converged((s) => (s.sets.length === 0 ? undefined : 'the set is still there'));
    expect(getSet('web')).toBeUndefined();
    expect(configMaps()).toEqual([]);
    expect(await registry.all()).toEqual({});
    expect(second.operator.stats()).toMatchObject({ cleanups: 1, finalizers: { added: 0, removed: 1 }, failed: 0 });
  });

  it('runs as a program on the embedded fake under leader election, prints each step and a passing check, and exits 0', async () => {
    const result = await runExample('examples/configmapset/main.ts', ['--fake', '--leader-elect', '--webhooks', '--webhook-port', '0']);
    expect(result.exitedInTime).toBe(true);
    expect(result.stderr).toBe('');
    expect(result.stdout).toContain('configmapset operator on embedded fake API server');
    expect(result.stdout).toContain('operator: leading (term 1)');
    expect(result.stdout).toMatch(/webhooks: serving on https:\/\/127\.0\.0\.1:\d+ under the operator's Manager/);
    expect(result.stdout).toMatch(/\[3\/6\] delete ConfigMap web-frontend by hand\n {6}operator: created ConfigMap demo\/web-frontend/);
    expect(result.stdout).toContain('operator: cleaned up demo/db: registry record removed, 1 ConfigMaps deleted');
    expect(result.stdout).toMatch(/scenario +6\/6 steps converged/);
    expect(result.stdout).toContain('consistency check: PASSED');
    expect(result.code).toBe(0);
  });
});
