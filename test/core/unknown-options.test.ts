// Issue 24 finding 1: a misspelt option is refused (INVALID_OPTION naming owner, key and the closest known key) everywhere an options object is taken.

import promClient from 'prom-client';
import { describe, expect, it } from 'vitest';
import { closestOption, validateOptions } from '../../src/core/options.js';
import { resources } from '../../src/core/resources.js';
import { FakeClock } from '../../src/core/clock.js';
import { DeltaFIFO } from '../../src/fifo/delta-fifo.js';
import { SharedInformerFactory } from '../../src/informer/factory.js';
import { newController } from '../../src/informer/controller.js';
import { newIndexerInformer, newInformer } from '../../src/informer/new-informer.js';
import { SharedIndexInformer } from '../../src/informer/shared-index-informer.js';
import { NamespaceSetInformer } from '../../src/informer/namespace-set.js';
import { watch } from '../../src/informer/watcher.js';
import { waitForCacheSyncWithOptions, waitForNamedCacheSync } from '../../src/health/wait-for-cache-sync.js';
import { decodeWatchStream } from '../../src/listwatch/decoder.js';
import { newListWatch } from '../../src/listwatch/list-watch.js';
import { newResourceClient } from '../../src/listwatch/resource-client.js';
import { loadInClusterConfig, loadKubeConfig } from '../../src/listwatch/in-cluster.js';
import { jsonLogger } from '../../src/core/json-log.js';
import { shutdownSignal } from '../../src/operations/shutdown.js';
import { newCacheMutationDetector } from '../../src/mutation/detector.js';
import { Reflector } from '../../src/reflector/reflector.js';
import { newStore } from '../../src/store/store.js';
import { metaNamespaceKeyFunc } from '../../src/core/keys.js';
import { applyJsonPatch } from '../../src/core/json-patch.js';
import { DelayingQueue, RateLimitingQueue, WorkQueue, BucketRateLimiter, defaultControllerRateLimiter, prometheusWorkQueueMetricsProvider } from '../../src/workqueue/index.js';
import { Controller } from '../../src/controller/controller.js';
import { Action, exponentialBackoff, ReconcileScheduler } from '../../src/controller/scheduler.js';
import { runWhileLeading } from '../../src/controller/leader.js';
import { LeaderElector, LeaseLock, InMemoryLock } from '../../src/leaderelection/index.js';
import { Manager, probeHandler, rbacManifests, startProbeServer, EventRecorder, DriftAudit, prometheusControllerMetricsProvider, registerInformerMetrics, MultiClusterController, MultiClusterManager, staticClusters, kubeconfigSecrets, clusterApiKubeconfigSecrets, shardedClusters } from '../../src/operations/index.js';
import { defineCustomResource, ensureCustomResourceDefinitions, Type, waitForCustomResourceDefinitions } from '../../src/crd/index.js';
import { allow, conversionWebhook, crdConversion, defaultingWebhook, prometheusWebhookMetricsProvider, reviewAdmission, validatingWebhook, validatingWebhookConfiguration, validationWebhook } from '../../src/webhook/index.js';
import { InMemoryRingStore, LeaseRingStore, ShardedInformer, ShardRing } from '../../src/sharding/index.js';
import { FakeApiServer, FakeControllerSource, ResourceState } from '../../src/testing/index.js';
import { initProject } from '../../src/cli/init.js';
import { kubeConfigFor } from '../listwatch/helpers.js';

const kc = kubeConfigFor('https://127.0.0.1:1');
const source = (): FakeControllerSource => new FakeControllerSource();
const factory = (): SharedInformerFactory => new SharedInformerFactory(undefined, { listWatchFor: () => source() });
const informer = (): SharedIndexInformer<unknown> => new SharedIndexInformer<unknown>(source(), { logger: false });
const ring = (): ShardRing => new ShardRing({ store: new InMemoryRingStore(), name: 'r', identity: 'a', logger: false });
const onStartedLeading = async (): Promise<void> => {};
const widgets = () => defineCustomResource({ group: 'example.com', names: { kind: 'Widget' }, versions: { v1: { spec: Type.Object({}) } } });
const lock = (): InMemoryLock => new InMemoryLock('me');
/** JavaScript callers, a config file spread into options, `as any`: the compiler is not there to help. */
const js = (value: unknown): never => value as never;

/** [what, a call with one misspelt option (sync throw or rejection), the expected message]. */
const table: Array<[string, () => unknown, string | RegExp]> = [
  // the four examples
  ['SharedInformerFactory', () => new SharedInformerFactory(kc, js({ resyncPeriod: 1000 })), 'SharedInformerFactory: unknown option resyncPeriod (did you mean resyncPeriodMs?)'],
  ['SharedInformerFactory.forResource', () => factory().forResource(resources.pods, js({ labelselector: 'app=web' })), 'SharedInformerFactory.forResource(v1/pods): unknown option labelselector (did you mean labelSelector?)'],
  ['SharedInformerFactory.forResource, a factory option', () => factory().forResource(resources.pods, js({ agent: {} })), /^SharedInformerFactory\.forResource\(v1\/pods\): option agent is not a per-resource option: it is an option of the whole factory/],
  ['SharedInformerFactory, a per-resource option', () => new SharedInformerFactory(kc, js({ metadataOnly: true })), /^SharedInformerFactory: option metadataOnly is not a factory option: it is an option of one resource: factory\.forResource\(resource, \{ metadataOnly: true \}\)/],
  ['WorkQueue', () => new WorkQueue(js({ nmae: 'q' })), 'WorkQueue: unknown option nmae (did you mean name?)'],
  ['DeltaFIFO', () => new DeltaFIFO(js({ transformer: (o: unknown) => o })), 'DeltaFIFO: unknown option transformer (did you mean transform?)'],
  // the JSON toolkit
  ['applyJsonPatch', () => applyJsonPatch({}, [], js({ dialekt: 'kube-apiserver' })), 'applyJsonPatch: unknown option dialekt (did you mean dialect?)'],
  // informers
  ['SharedInformerFactory informerOptions', () => new SharedInformerFactory(kc, js({ informerOptions: { stopGrace: 1 } })), 'SharedInformerFactory: unknown option informerOptions.stopGrace (did you mean informerOptions.stopGraceMs?)'],
  ['SharedInformerFactory.newInformer', () => factory().newInformer(resources.pods, js({ nam: 'x' })), 'SharedInformerFactory.newInformer: unknown option nam (did you mean name?)'],
  ['SharedIndexInformer', () => new SharedIndexInformer(source(), js({ resyncPeriod: 1 })), 'SharedIndexInformer: unknown option resyncPeriod (did you mean resyncPeriodMs?)'],
  ['SharedIndexInformer reflector', () => new SharedIndexInformer(source(), js({ reflector: { pagesize: 5 } })), 'SharedIndexInformer: unknown option reflector.pagesize (did you mean reflector.pageSize?)'],
  ['SharedIndexInformer reflector.backoff', () => new SharedIndexInformer(source(), js({ reflector: { backoff: { initial: 5 } } })), 'SharedIndexInformer: unknown option reflector.backoff.initial (did you mean reflector.backoff.initialMs?)'],
  ['SharedIndexInformer health', () => new SharedIndexInformer(source(), js({ health: { watchStall: 5 } })), 'SharedIndexInformer: unknown option health.watchStall (did you mean health.watchStallMs?)'],
  ['SharedIndexInformer onResourceMissing', () => new SharedIndexInformer(source(), js({ onResourceMising: 'absent' })), 'SharedIndexInformer: unknown option onResourceMising (did you mean onResourceMissing?)'],
  ['addEventHandler', () => informer().addEventHandler({}, js({ resyncPeriod: 1000 })), 'informer.addEventHandler: unknown option resyncPeriod (did you mean resyncPeriodMs?)'],
  ['newInformer', () => newInformer(source(), {}, js({ resync: 1 })), /^newInformer: unknown option resync \(known options: /],
  ['newIndexerInformer', () => newIndexerInformer(source(), {}, js({ indexers: {}, indexer: {} })), 'newIndexerInformer: unknown option indexer (did you mean indexers?)'],
  ['newController', () => newController(js({ queue: new DeltaFIFO(), listerWatcher: source(), process: () => {}, onSync: () => {} })), 'newController: unknown option onSync (did you mean onSynced?)'],
  ['Reflector', () => new Reflector(source(), newStore(metaNamespaceKeyFunc), js({ useWatchlist: true })), 'Reflector: unknown option useWatchlist (did you mean useWatchList?)'],
  ['waitForCacheSyncWithOptions', () => waitForCacheSyncWithOptions(js({ signal: new AbortController().signal, pollInterval: 5 })), 'waitForCacheSyncWithOptions: unknown option pollInterval (did you mean pollIntervalMs?)'],
  ['waitForNamedCacheSync', () => waitForNamedCacheSync(js({ signal: new AbortController().signal, clok: new FakeClock() }), {}), 'waitForCacheSyncWithOptions: unknown option clok (did you mean clock?)'],
  ['newCacheMutationDetector', () => newCacheMutationDetector(js({ period: 5 })), /^CacheMutationDetector: unknown option period \(did you mean periodMs\?\)/],
  // list/watch
  ['newListWatch', () => newListWatch(kc, resources.pods, js({ namespce: 'a' })), 'newListWatch: unknown option namespce (did you mean namespace?)'],
  ['loadInClusterConfig', () => loadInClusterConfig(js({ tokenCheckInterval: 5 })), 'loadInClusterConfig: unknown option tokenCheckInterval (did you mean tokenCheckIntervalMs?)'],
  ['loadKubeConfig', () => loadKubeConfig(js({ kubeConfig: 'a' })), 'loadKubeConfig: unknown option kubeConfig (did you mean kubeconfig?)'],
  ['jsonLogger', () => jsonLogger(js({ stream: { write: () => {} }, levl: 'info' })), 'jsonLogger: unknown option levl (did you mean level?)'],
  ['shutdownSignal', () => shutdownSignal(js({ signal: ['SIGTERM'] })), 'shutdownSignal: unknown option signal (did you mean signals?)'],
  ['newResourceClient', () => newResourceClient(kc, resources.pods, js({ fieldmanager: 'me' })), 'ResourceClient: unknown option fieldmanager (did you mean fieldManager?)'],
  ['ResourceClient.delete', () => newResourceClient(kc, resources.pods).delete('p', 'ns', js({ preconditions: { resourceVerison: '1' } })), 'ResourceClient(pods).delete: unknown option preconditions.resourceVerison (did you mean preconditions.resourceVersion?)'],
  ['ListerWatcher.list', () => newListWatch(kc, resources.pods).list(js({ limt: 5 }), new AbortController().signal), 'ListerWatcher.list: unknown option limt (did you mean limit?)'],
  ['ListerWatcher.watch', () => newListWatch(kc, resources.pods).watch(js({ allowWatchBookmark: true }), new AbortController().signal), 'ListerWatcher.watch: unknown option allowWatchBookmark (did you mean allowWatchBookmarks?)'],
  ['decodeWatchStream', () => decodeWatchStream(js([]), js({ descripton: 'x' })), 'decodeWatchStream: unknown option descripton (did you mean description?)'],
  // work queues and rate limiters
  ['DelayingQueue', () => new DelayingQueue(js({ clok: new FakeClock() })), 'DelayingQueue: unknown option clok (did you mean clock?)'],
  ['RateLimitingQueue', () => new RateLimitingQueue(js({ ratelimiter: defaultControllerRateLimiter() })), 'RateLimitingQueue: unknown option ratelimiter (did you mean rateLimiter?)'],
  ['BucketRateLimiter', () => new BucketRateLimiter(1, 1, js({ clck: new FakeClock() })), 'BucketRateLimiter: unknown option clck (did you mean clock?)'],
  ['defaultControllerRateLimiter', () => defaultControllerRateLimiter(js({ Clock: new FakeClock() })), 'BucketRateLimiter: unknown option Clock (did you mean clock?)'],
  ['prometheusWorkQueueMetricsProvider', () => prometheusWorkQueueMetricsProvider(promClient, js({ prefx: 'a_' })), 'prometheusWorkQueueMetricsProvider: unknown option prefx (did you mean prefix?)'],
  // controllers
  ['Controller.for', () => Controller.for(factory(), resources.pods, js({ predicate: [] })), 'Controller.for: unknown option predicate (did you mean predicates?)'],
  ['ControllerBuilder.owns', () => Controller.for(factory(), resources.pods).owns(resources.configmaps, js({ predicate: [] })), 'ControllerBuilder.owns: unknown option predicate (did you mean predicates?)'],
  ['ControllerBuilder.uses', () => Controller.for(factory(), resources.pods).uses(resources.configmaps, ['get'], js({ subresorce: 'status' })), 'ControllerBuilder.uses: unknown option subresorce (did you mean subresource?)'],
  ['Controller (build)', () => Controller.for(factory(), resources.pods).build(async () => ({ kind: 'done' }), js({ concurency: 2 })), 'Controller: unknown option concurency (did you mean concurrency?)'],
  ['ReconcileScheduler', () => new ReconcileScheduler(js({ debounce: 5 })), 'ReconcileScheduler: unknown option debounce (did you mean debounceMs?)'],
  ['Controller (build), rateLimit', () => Controller.for(factory(), resources.pods).build(async () => ({ kind: 'done' }), js({ rateLimit: { qsp: 5 } })), 'Controller: unknown option rateLimit.qsp (did you mean rateLimit.qps?)'],
  ['ReconcileScheduler, rateLimit', () => new ReconcileScheduler(js({ rateLimit: { brust: 5 } })), 'ReconcileScheduler: unknown option rateLimit.brust (did you mean rateLimit.burst?)'],
  ['Controller concurrencyGroups', () => Controller.for(factory(), resources.pods).build(async () => ({ kind: 'done' }), js({ concurrencyGroups: { keyof: () => '' } })), 'Controller v1/pods.concurrencyGroups: unknown option keyof (did you mean keyOf?)'],
  ['ReconcileScheduler concurrencyGroups', () => new ReconcileScheduler(js({ concurrencyGroups: { keyOf: () => '', concurency: 2 } })), 'ReconcileScheduler.concurrencyGroups: unknown option concurency (did you mean concurrency?)'],
  ['ReconcileScheduler.schedule', () => new ReconcileScheduler().schedule('k', js({ delay: 5 })), 'ReconcileScheduler.schedule: unknown option delay (did you mean delayMs?)'],
  ['exponentialBackoff', () => exponentialBackoff(js({ base: 5 })), /^exponentialBackoff: unknown option base \(/],
  ['prometheusControllerMetricsProvider', () => prometheusControllerMetricsProvider(promClient, js({ reconcileTimeBucket: [1] })), 'prometheusControllerMetricsProvider: unknown option reconcileTimeBucket (did you mean reconcileTimeBuckets?)'],
  ['validatingWebhookConfiguration', () => validatingWebhookConfiguration(js({ name: 'w', endpoint: { url: 'https://127.0.0.1:9443' }, webhooks: [], caBudle: 'x' })), 'validatingWebhookConfiguration: unknown option caBudle (did you mean caBundle?)'],
  ['crdConversion', () => crdConversion(js({ endpoint: { url: 'https://127.0.0.1:9443' }, path: '/convert', cabundle: 'x' })), 'crdConversion: unknown option cabundle (did you mean caBundle?)'],
  ['conversionWebhook', () => conversionWebhook(js({ name: 'c', group: 'example.com', hub: 'v1', spokes: {}, servedVersion: ['v1'] })), 'conversionWebhook: unknown option servedVersion (did you mean servedVersions?)'],
  ['defaultingWebhook', () => defaultingWebhook(widgets(), undefined, js({ onTimout: 'allow' })), 'defaultingWebhook: unknown option onTimout (did you mean onTimeout?)'],
  ['validationWebhook', () => validationWebhook(widgets(), undefined, js({ nme: 'v.example.com' })), 'validationWebhook: unknown option nme (did you mean name?)'],
  ['prometheusWebhookMetricsProvider', () => prometheusWebhookMetricsProvider(promClient, js({ prefx: 'x_' })), 'prometheusWebhookMetricsProvider: unknown option prefx (did you mean prefix?)'],
  ['reviewAdmission', () => reviewAdmission(validatingWebhook({ name: 'v.example.com' }, () => allow()), js({ resource: resources.configmaps, dryrun: true })), 'reviewAdmission: unknown option dryrun (did you mean dryRun?)'],
  // leader election
  ['LeaderElector', () => new LeaderElector(js({ lock: lock(), onStartedLeading, leaseDuration: 15_000 })), 'LeaderElector: unknown option leaseDuration (did you mean leaseDurationMs?)'],
  ['runWhileLeading', () => runWhileLeading([], js({ lock: lock(), releaseOnCancle: true }), new AbortController().signal), 'runWhileLeading: unknown option releaseOnCancle (did you mean releaseOnCancel?)'],
  ['LeaseLock', () => new LeaseLock(js({ client: {}, namespace: 'n', name: 'l', identity: 'me', namepsace: 'x' })), 'LeaseLock: unknown option namepsace (did you mean namespace?)'],
  ['InMemoryLock', () => new InMemoryLock('me', undefined, js({ wach: false })), 'InMemoryLock: unknown option wach (did you mean watch?)'],
  // operations
  ['Manager', () => new Manager(factory(), js({ controller: [] })), 'Manager: unknown option controller (did you mean controllers?)'],
  ['MultiClusterManager', () => new MultiClusterManager(js({ providers: [staticClusters({ one: kc })], controller: [] })), 'MultiClusterManager: unknown option controller (did you mean controllers?)'],
  ['MultiClusterController', () => MultiClusterController.for(resources.configmaps).build(async () => Action.done(), js({ name: 'x', concurency: 2 })), 'MultiClusterController: unknown option concurency (did you mean concurrency?)'],
  ['MultiClusterController.permissions', () => MultiClusterController.for(resources.configmaps).build(async () => Action.done(), { logger: false }).permissions(js({ namepsace: 'a' })), 'MultiClusterController.permissions: unknown option namepsace (did you mean namespace?)'],
  ['MultiClusterManager.permissionReport', () => new MultiClusterManager({ providers: [staticClusters({ one: kc })] }).permissionReport(js({ cluster: 'target', clusters: 'x' })), 'MultiClusterManager.permissionReport: unknown option clusters (did you mean cluster?)'],
  ['Manager followCustomResources', () => new Manager(factory(), js({ followCustomResource: true })), 'Manager: unknown option followCustomResource (did you mean followCustomResources?)'],
  ['Manager probes', () => new Manager(factory(), js({ probes: { prot: 8081 } })), 'Manager: unknown option probes.prot (did you mean probes.port?)'],
  ['Manager leaderElection', () => new Manager(factory(), js({ leaderElection: { lock: lock(), renewDeadline: 1 } })), 'Manager: unknown option leaderElection.renewDeadline (did you mean leaderElection.renewDeadlineMs?)'],
  ['Manager crdInstall', () => new Manager(factory(), js({ crds: [], crdInstall: { fieldmanager: 'me' } })), 'Manager: unknown option crdInstall.fieldmanager (did you mean crdInstall.fieldManager?)'],
  ['ensureCustomResourceDefinitions', () => ensureCustomResourceDefinitions(js({}), [], js({ forced: true })), 'ensureCustomResourceDefinitions: unknown option forced (did you mean force?)'],
  ['waitForCustomResourceDefinitions', () => waitForCustomResourceDefinitions(js({}), [], js({ timeout: 1 })), 'waitForCustomResourceDefinitions: unknown option timeout (did you mean timeoutMs?)'],
  ['probeHandler', () => probeHandler(js({ informers: [], metric: {} })), 'probeHandler: unknown option metric (did you mean metrics?)'],
  ['startProbeServer', () => startProbeServer(js({ informers: [], hots: '127.0.0.1' })), 'startProbeServer: unknown option hots (did you mean host?)'],
  ['registerInformerMetrics', () => registerInformerMetrics(promClient, [], js({ audit: [] })), 'registerInformerMetrics: unknown option audit (did you mean audits?)'],
  ['EventRecorder', () => new EventRecorder(kc, js({ reportingController: 'example.com/c', reportingInstanse: 'x' })), 'EventRecorder: unknown option reportingInstanse (did you mean reportingInstance?)'],
  ['EventRecorder.event', () => new EventRecorder(kc, { reportingController: 'example.com/c', logger: false }).event({ apiVersion: 'v1', kind: 'Pod', name: 'p' }, js({ type: 'Normal', reason: 'R', action: 'A', nte: 'x' })), 'EventRecorder.event: unknown option nte (did you mean note?)'],
  ['DriftAudit', () => new DriftAudit(undefined, informer(), js({ listWatch: source(), interval: 5 })), /^DriftAudit: unknown option interval \(did you mean intervalMs\?\)/],
  ['kubeconfigSecrets', () => kubeconfigSecrets(js({ factory: factory(), namespce: 'fleet' })), 'kubeconfigSecrets: unknown option namespce (did you mean namespace?)'],
  ['clusterApiKubeconfigSecrets', () => clusterApiKubeconfigSecrets(js({ factory: factory(), verifyTimeout: 5 })), 'clusterApiKubeconfigSecrets: unknown option verifyTimeout (did you mean verifyTimeoutMs?)'],
  ['shardedClusters', () => shardedClusters(staticClusters({ one: kc }), new ShardRing({ store: new InMemoryRingStore(), name: 'r', identity: 'a' }), js({ loger: false })), 'shardedClusters: unknown option loger (did you mean logger?)'],
  // sharding
  ['ShardRing', () => new ShardRing(js({ store: new InMemoryRingStore(), name: 'r', identity: 'a', slot: 4 })), 'ShardRing: unknown option slot (did you mean slots?)'],
  ['LeaseRingStore', () => new LeaseRingStore(kc, js({ namespace: 'n', ring: 'r', leaseDurationSeconds: 15, leaseDurationMs: 1 })), /^LeaseRingStore: unknown option leaseDurationMs \(/],
  ['ShardedInformer', () => new ShardedInformer(js({ ring: ring(), informerFor: () => informer(), nme: 's' })), 'ShardedInformer: unknown option nme (did you mean name?)'],
  ['NamespaceSetInformer', () => new NamespaceSetInformer(js({ namespaces: ['a'], informerFor: () => informer(), nme: 's' })), 'NamespaceSetInformer: unknown option nme (did you mean name?)'],
  ['NamespaceSetInformer.addEventHandler', () => new NamespaceSetInformer({ namespaces: ['a'], informerFor: () => informer() }).addEventHandler({}, js({ nam: 'h' })), 'namespaces.addEventHandler: unknown option nam (did you mean name?)'],
  ['ShardedInformer.addEventHandler', () => new ShardedInformer({ ring: ring(), informerFor: () => informer() }).addEventHandler({}, js({ nam: 'h' })), 'sharded.addEventHandler: unknown option nam (did you mean name?)'],
  ['SharedIndexInformer.events', () => informer().events(undefined, js({ highWatermark: 4 })), 'informer.events: unknown option highWatermark (did you mean highWaterMark?)'],
  ['NamespaceSetInformer.events', () => new NamespaceSetInformer({ namespaces: ['a'], informerFor: () => informer() }).events(undefined, js({ nam: 'h' })), 'namespaces.events: unknown option nam (did you mean name?)'],
  ['ShardedInformer.events', () => new ShardedInformer({ ring: ring(), informerFor: () => informer() }).events(undefined, js({ nam: 'h' })), 'sharded.events: unknown option nam (did you mean name?)'],
  ['watch', () => watch(source(), js({ syncFailureTreshold: 2 })).next(), 'watch: unknown option syncFailureTreshold (did you mean syncFailureThreshold?)'],
  // the command
  ['initProject', () => initProject('/nonexistent/never-written', js({ name: 'x', kinds: 'X' })), 'initProject: unknown option kinds (did you mean kind?)'],
  // the test kit
  ['FakeApiServer', () => new FakeApiServer(js({ bookmarkInterval: 5 })), 'FakeApiServer: unknown option bookmarkInterval (did you mean bookmarkIntervalMs?)'],
  ['FakeApiServer.usedPermissions', () => new FakeApiServer().usedPermissions(js({ tokn: 'x' })), 'FakeApiServer.usedPermissions: unknown option tokn (did you mean token?)'],
  ['rbacManifests', () => rbacManifests([], js({ name: 'a', namespace: 'b', serviceAcountName: 'c' })), 'rbacManifests: unknown option serviceAcountName (did you mean serviceAccountName?)'],
  ['FakeApiServer.create', () => new FakeApiServer().create({ resource: 'pods' }, { metadata: { name: 'p' } }, js({ broadcst: false })), 'FakeApiServer.create: unknown option broadcst (did you mean broadcast?)'],
  ['ResourceState', () => new ResourceState(js({ historylimit: 5 })), 'ResourceState: unknown option historylimit (did you mean historyLimit?)'],
  ['ResourceState.page', () => new ResourceState().page('pods', js({ limt: 5 })), 'ResourceState.page: unknown option limt (did you mean limit?)'],
  ['FakeControllerSource', () => new FakeControllerSource(js({ listkind: 'PodList' })), 'FakeControllerSource: unknown option listkind (did you mean listKind?)'],
];

describe('unknown options are refused everywhere an options object is taken', () => {
  for (const [what, call, message] of table) {
    it(`${what}: INVALID_OPTION naming the owner, the key and the closest known key`, async () => {
      let outcome: unknown;
      try {
        outcome = call();
      } catch (err) {
        outcome = Promise.reject(err as Error);
      }
      const expected = typeof message === 'string' ? message : expect.stringMatching(message);
      await expect(Promise.resolve(outcome)).rejects.toMatchObject({ code: 'INVALID_OPTION', message: expected });
    });
  }
});

describe('the validator', () => {
  it('refuses unknown keys at any depth, listing the known options when none is close', () => {
    const schema = { periodMs: 'duration', nested: { limitMs: 'duration' } } as const;
    expect(() => validateOptions('Thing', { colour: 'red' } as unknown, schema)).toThrow('Thing: unknown option colour (known options: periodMs, nested)');
    expect(() => validateOptions('Thing', { nested: { limit: 1 } } as unknown, schema)).toThrow('Thing: unknown option nested.limit (did you mean nested.limitMs?)');
    expect(() => validateOptions('Thing', { foo: 1 } as unknown, {})).toThrow('Thing: unknown option foo (it takes no options)');
  });

  it('refuses an unknown key even when its value is undefined (a spread config with a typo)', () => {
    expect(() => validateOptions('Thing', { periodms: undefined } as unknown, { periodMs: 'duration' })).toThrow('Thing: unknown option periodms (did you mean periodMs?)');
  });

  it('a schema that forgets an option of its type does not compile (so a new option cannot miss its rule)', () => {
    interface ThingOptions {
      periodMs?: number;
      name?: string;
    }
    const check = (options: ThingOptions): void => {
      // @ts-expect-error -- name has no rule
      validateOptions('Thing', options, { periodMs: 'duration' });
      // @ts-expect-error -- and a rule for an option the type does not have is refused too
      validateOptions('Thing', options, { periodMs: 'duration', name: 'string', colour: 'string' });
      validateOptions('Thing', options, { periodMs: 'duration', name: 'string' });
    };
    expect(typeof check).toBe('function'); // a compile-time check: never called
  });

  it("takes any value for an 'any' rule", () => {
    for (const value of [null, 0, 'x', [], {}, () => {}]) expect(() => validateOptions('Thing', { x: value }, { x: 'any' })).not.toThrow();
  });

  it('suggests the closest known key: case-insensitive, a small edit distance, nothing when far', () => {
    expect(closestOption('RESYNCPERIODMS', ['resyncPeriodMs', 'name'])).toBe('resyncPeriodMs');
    expect(closestOption('nmae', ['name', 'clock'])).toBe('name');
    expect(closestOption('transformer', ['transform', 'keyFunc'])).toBe('transform');
    expect(closestOption('qps', ['name', 'clock'])).toBeUndefined();
    expect(closestOption('labelSelectr', ['labelSelector', 'fieldSelector'])).toBe('labelSelector');
  });
});
