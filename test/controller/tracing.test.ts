// Controller tracing (option tracerProvider) on the fake API server with the SDK's in-memory exporter:
// watch event → reconcile span (link) → write span → read-your-writes event, outcomes and failures,
// trace ids on log lines, a broken tracer, and a controller without the option.

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { context } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import { flushPromises } from '../../src/core/clock.js';
import { ErrorCodes, resources } from '../../src/core/index.js';
import { Action, Controller, TerminalError } from '../../src/controller/index.js';
import { SharedInformerFactory } from '../../src/informer/index.js';
import { Manager } from '../../src/operations/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import type { TracerProviderLike } from '../../src/observability/index.js';
import { ControllerTracing, MAX_LINKS } from '../../src/controller/tracing.js';
import { memoryLog, widget, widgets, type Widget } from './fixture.js';

let server: FakeApiServer;
let stop: AbortController;
let running: Array<Promise<unknown>>;
let exporter: InMemorySpanExporter;
let provider: BasicTracerProvider;
const contextManager = new AsyncLocalStorageContextManager();

beforeAll(() => {
  context.setGlobalContextManager(contextManager.enable());
});
afterAll(() => {
  context.disable();
});
beforeEach(async () => {
  server = await startFakeApiServer({ resources: [{ ...widgets, generation: true }] });
  stop = new AbortController();
  running = [];
  exporter = new InMemorySpanExporter();
  provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
});
afterEach(async () => {
  stop.abort();
  await Promise.allSettled(running);
  await server.close();
});

async function until(cond: () => boolean, what: string, turns = 20_000): Promise<void> {
  for (let i = 0; i < turns; i++) {
    if (cond()) return;
    await flushPromises(1);
  }
  throw new Error(`timed out waiting for ${what}`);
}

function factory(): SharedInformerFactory {
  const f = new SharedInformerFactory(server.kubeConfig, { logger: false });
  f.start(stop.signal);
  return f;
}

function run(controller: Controller<Widget>): void {
  running.push(controller.run(stop.signal));
}

const spans = (name: string): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.name === name);

function child(owner: Widget, name: string): ConfigMap {
  const ref = { apiVersion: 'example.com/v1', kind: 'Widget', name: owner.metadata!.name!, uid: owner.metadata!.uid!, controller: true };
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', ownerReferences: [ref] }, data: { k: 'v' } };
}

describe('controller tracing', () => {
  it('links the reconcile span to the watch event, nests the write span and the user span under it, puts its ids on log lines, and records the read-your-writes wait', async () => {
    const log = memoryLog();
    const lines: Array<Record<string, unknown>> = [];
    const logger = { ...log.logger, info: (m: string, fields?: Record<string, unknown>) => void lines.push({ m, ...fields }) };
    let reconciles = 0;
    const controller = Controller.for(factory(), widgets)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx) => {
          reconciles++;
          const mine = provider.getTracer('user').startSpan('user work');
          mine.end();
          ctx.logger.info('reconciling');
          if (reconciles === 1) await ctx.client(resources.configmaps).create(child(ctx.object as Widget, 'c'));
          return Action.done();
        },
        { logger, tracerProvider: provider, name: 'widgets' },
      );
    run(controller);
    const w = server.create(widgets, widget('w'));
    // The first reconcile writes a child; its add (owns) requests the key again, held until the write is observed.
    await until(() => spans('reconcile widgets').length >= 2, 'two reconcile spans');

    const [first, second] = spans('reconcile widgets');
    expect(first.attributes).toMatchObject({
      'kube_informer.controller': 'widgets',
      'kube_informer.key': 'ns/w',
      'k8s.namespace.name': 'ns',
      'kube_informer.reason': 'watch',
      'kube_informer.reason.role': 'for',
      'kube_informer.reason.event': 'add',
      'kube_informer.attempt': 0,
      'kube_informer.outcome': 'done',
    });
    // The link: the short span of the widget's add event, with its resourceVersion.
    const [event] = spans('add example.com/v1/widgets');
    expect(event.attributes).toMatchObject({ 'kube_informer.name': 'w', 'k8s.namespace.name': 'ns', 'kube_informer.resource_version': w.metadata!.resourceVersion });
    expect(first.links.map((l) => l.context.spanId)).toEqual([event.spanContext().spanId]);
    // The write: a client span under the reconcile span.
    const [write] = spans('create v1/configmaps');
    expect(write.parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    expect(write.attributes).toMatchObject({ 'kube_informer.verb': 'create', 'kube_informer.name': 'c', 'k8s.namespace.name': 'ns' });
    // The user's own span nests under the reconcile span (the reconcile span is the active context).
    expect(spans('user work')[0].parentSpanContext?.spanId).toBe(first.spanContext().spanId);
    // The second reconcile links to the ConfigMap's add, and carries the wait for the first one's write.
    expect(second.attributes).toMatchObject({ 'kube_informer.reason.role': 'owns', 'kube_informer.reason.resource': 'v1/configmaps' });
    const cmEvent = spans('add v1/configmaps')[0];
    expect(second.links.map((l) => l.context.spanId)).toContain(cmEvent.spanContext().spanId);
    const observed = second.events.find((e) => e.name === 'kube_informer.writes_observed');
    expect(observed?.attributes).toMatchObject({ 'kube_informer.writes': 1, 'kube_informer.writes.missed': 0, 'kube_informer.writes.timed_out': false });
    // The log lines of the reconcile carry its trace and span ids.
    const mine = lines.filter((l) => l.m === 'reconciling');
    expect(mine[0]).toMatchObject({ traceId: first.spanContext().traceId, spanId: first.spanContext().spanId, key: 'ns/w' });
    expect(controller.stats().tracingFaults).toBe(0);
  });

  it('keeps a link per merged event (capped), and records failures: a 409 on the write span, ERROR and the exception on the reconcile span', async () => {
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const controller = Controller.for(factory(), widgets)
      .owns(resources.configmaps)
      .build(
        async (_key, ctx) => {
          calls++;
          if (calls === 1) await Promise.race([gate, new Promise((r) => ctx.signal.addEventListener('abort', r))]);
          if (calls === 2) {
            server.injectFault({ type: 'status', code: 409, verb: 'create', resource: 'configmaps' });
            await ctx.client(resources.configmaps).create(child(ctx.object as Widget, 'c'));
          }
          if (calls === 3) throw new TerminalError('gave up');
          return Action.done();
        },
        { logger: false, tracerProvider: provider, name: 'widgets', onError: () => Action.requeueAfter(0) },
      );
    run(controller);
    const w = server.create(widgets, widget('w'));
    await until(() => calls === 1, 'the first reconcile');
    // Three changes while the first reconcile runs: one merged request, three links.
    for (let i = 1; i <= 3; i++) server.update(widgets, { ...w, spec: { size: i } });
    await until(() => spans('update example.com/v1/widgets').length === 3, 'three update events');
    release();
    await until(() => spans('reconcile widgets').length === 3, 'three reconcile spans');
    const [, second, third] = spans('reconcile widgets');
    expect(second.links).toHaveLength(3);
    expect(second.attributes['kube_informer.reason.event']).toBe('update');
    const [write] = spans('create v1/configmaps');
    expect(write.attributes).toMatchObject({ 'http.response.status_code': 409, 'error.type': 'Conflict' });
    expect(write.status.code).toBe(2);
    expect(second.attributes['kube_informer.outcome']).toBe('error');
    expect(second.status.code).toBe(2);
    expect(second.events.some((e) => e.name === 'exception')).toBe(true);
    expect(third.attributes).toMatchObject({ 'kube_informer.reason': 'retry', 'kube_informer.attempt': 1, 'kube_informer.outcome': 'terminal' });
    expect(w.metadata?.name).toBe('w');
  });

  it(`keeps at most ${MAX_LINKS} links per reconcile and counts the rest; an update (both states' keys) links once`, () => {
    const tracing = new ControllerTracing('Controller t', 't', provider, memoryLog().logger);
    const handler = tracing.handler(widgets, {
      onAdd: () => tracing.requested('ns/w'),
      onUpdate: () => {
        tracing.requested('ns/w');
        tracing.requested('ns/w');
      },
    });
    handler.onUpdate!(widget('w'), widget('w'));
    const first = tracing.start('ns/w', { kind: 'schedule' }, 0)!;
    first.started({ priority: -100 }); // ReconcileContext.priority, where the scheduler has priorities
    tracing.end(first, Action.done());
    for (let i = 0; i < MAX_LINKS + 4; i++) handler.onAdd!(widget(`w${i}`), false);
    const second = tracing.start('ns/w', { kind: 'schedule' }, 0)!;
    tracing.end(second, Action.done());
    const [a, b] = spans('reconcile t');
    expect(a.links).toHaveLength(1);
    expect(a.attributes['kube_informer.priority']).toBe(-100);
    expect(b.attributes).not.toHaveProperty('kube_informer.priority');
    expect(b.links).toHaveLength(MAX_LINKS);
    expect(b.attributes['kube_informer.links.dropped']).toBe(4);
  });

  it('refuses a provider whose getTracer throws when the controller is built (INVALID_OPTION)', () => {
    const broken: TracerProviderLike = {
      getTracer: () => {
        throw new Error('no tracer today');
      },
    };
    const build = (): unknown => Controller.for(factory(), widgets).build(async () => Action.done(), { logger: false, tracerProvider: broken });
    expect(build).toThrow(expect.objectContaining({ code: ErrorCodes.INVALID_OPTION, message: expect.stringContaining('no tracer today') }));
    expect(() => Controller.for(factory(), widgets).build(async () => Action.done(), { logger: false, tracerProvider: {} as TracerProviderLike })).toThrow(/option tracerProvider must be an OpenTelemetry TracerProvider/);
  });

  it('a tracer that throws during reconciles: logged once per kind, counted, and every request is still reconciled', async () => {
    const log = memoryLog();
    const throwing: TracerProviderLike = {
      getTracer: () => ({
        startSpan: () => {
          throw new Error('exporter on fire');
        },
      }),
    };
    const seen: string[] = [];
    const controller = Controller.for(factory(), widgets).build(
      async (key) => {
        seen.push(key);
        return Action.done();
      },
      { logger: log.logger, tracerProvider: throwing },
    );
    run(controller);
    for (const name of ['a', 'b', 'c']) server.create(widgets, widget(name));
    await until(() => seen.length === 3, 'three reconciles');
    expect(seen.sort()).toEqual(['ns/a', 'ns/b', 'ns/c']);
    const warnings = log.lines.filter((l) => l.includes('tracing failed'));
    expect(warnings).toHaveLength(2); // one per kind: the event span and the reconcile span
    expect(controller.stats().tracingFaults).toBe(6);
  });

  it("takes the Manager's tracerProvider when it has none of its own; its own wins", async () => {
    const own = new InMemorySpanExporter();
    const ownProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(own)] });
    const f = new SharedInformerFactory(server.kubeConfig, { logger: false });
    const reconciled = new Set<string>();
    const reconcile = async (key: string): Promise<Action> => {
      reconciled.add(key);
      return Action.done();
    };
    const handed = Controller.for(f, widgets).build(reconcile, { logger: false, name: 'handed' });
    const mine = Controller.for(f, resources.configmaps).build(reconcile, { logger: false, name: 'mine', tracerProvider: ownProvider });
    const manager = new Manager(f, { controllers: [handed, mine], tracerProvider: provider, logger: false });
    running.push(manager.run(stop.signal));
    server.create(widgets, widget('w'));
    server.create('configmaps', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' } });
    await until(() => reconciled.size === 2, 'both reconciles');
    await until(() => spans('reconcile handed').length === 1 && own.getFinishedSpans().some((x) => x.name === 'reconcile mine'), 'the spans');
    expect(spans('reconcile mine')).toEqual([]);
  });

  it('without the option: no span, no trace fields, tracingFaults 0', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const logger = { ...memoryLog().logger, info: (m: string, fields?: Record<string, unknown>) => void lines.push({ m, ...fields }) };
    let done = false;
    const controller = Controller.for(factory(), widgets).build(
      async (_key, ctx) => {
        ctx.logger.info('reconciling');
        done = true;
        return Action.done();
      },
      { logger },
    );
    run(controller);
    server.create(widgets, widget('w'));
    await until(() => done, 'the reconcile');
    expect(exporter.getFinishedSpans()).toEqual([]);
    expect(lines[0]).not.toHaveProperty('traceId');
    expect(controller.stats().tracingFaults).toBe(0);
  });
});
