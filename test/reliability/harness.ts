// A SharedIndexInformer over newListWatch against the fake API server, for the bad-input catalogue.

import { expect } from 'vitest';
import { FakeClock } from '../../src/core/clock.js';
import type { KubeObject } from '../../src/core/types.js';
import { SharedIndexInformer, type HandlerError, type ResourceEventHandler, type SharedIndexInformerOptions } from '../../src/informer/index.js';
import type { IndexFuncError } from '../../src/store/index.js';
import { newListWatch, type KubeListWatch, type ListerWatcher } from '../../src/listwatch/index.js';
import type { NewListWatchOptions } from '../../src/listwatch/index.js';
import type { ReflectorErrorContext } from '../../src/reflector/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../src/testing/index.js';
import { HandlerRecorder } from '../../soak/recorder.js';

/** A minimal pod. */
export interface Pod extends KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: Record<string, unknown>;
}

export const PODS = { group: '', version: 'v1', resource: 'pods' } as const;

/** One error told to the informer's hooks. */
export interface Reported {
  readonly error: Error;
  readonly context?: ReflectorErrorContext;
}

/** Options of {@link startInformer}. */
export interface HarnessOptions {
  /** Pods created before the informer starts (`pod-0`...). Default 3. */
  pods?: number;
  /** Wraps the ListerWatcher (to corrupt lists or events). */
  wrap?: (lw: KubeListWatch<Pod>) => ListerWatcher<Pod>;
  /** More informer options. */
  informer?: Partial<SharedIndexInformerOptions<Pod>>;
  /** Options of newListWatch. */
  listWatch?: NewListWatchOptions;
  /** Runs against the server before the informer starts (e.g. to create special objects). */
  seed?: (server: FakeApiServer) => void;
  /** Do not wait for the first sync. */
  noSync?: boolean;
  /** More handlers, registered after the recorder. */
  handlers?: ResourceEventHandler<Pod>[];
}

/** The running informer and what it reported. */
export interface Harness {
  readonly server: FakeApiServer;
  readonly clock: FakeClock;
  readonly informer: SharedIndexInformer<Pod>;
  /** Errors told to `onWatchError`. */
  readonly watchErrors: Reported[];
  /** Handler errors told to `onError` (errorPolicy `report`). */
  readonly handlerErrors: Array<HandlerError | IndexFuncError>;
  /** A handler replaying its calls into a map. */
  readonly handler: HandlerRecorder;
  /** Waits for `cond`, moving the fake clock 100 ms between polls of real I/O. */
  until(cond: () => boolean, what: string): Promise<void>;
  /** The cache as `namespace/name → resourceVersion`. */
  cache(): Record<string, string>;
  /** The server's pods as `namespace/name → resourceVersion`. */
  truth(): Record<string, string>;
  /** Waits until the cache and the handler's replay equal the server, and checks it. */
  converged(what: string): Promise<void>;
  /** Proves the informer is still running: a new pod reaches the cache and the handler. */
  stillRunning(name?: string): Promise<void>;
  /** Errors reported with this code. */
  codes(): string[];
  /** Stops the informer (expecting a clean stop unless `expectFailure`) and closes the server. */
  stop(expectFailure?: boolean): Promise<Error | undefined>;
}

const open: Harness[] = [];

/** Stops every harness left open (call from `afterEach`). */
export async function stopAll(): Promise<void> {
  for (const h of open.splice(0)) await h.stop(true).catch(() => undefined);
}

/** A pod in `default`. */
export function pod(name: string, extra: Partial<Pod> = {}): Pod {
  return { apiVersion: 'v1', kind: 'Pod', metadata: { name, namespace: 'default' }, spec: { containers: [] }, ...extra };
}

/** Starts the fake server, creates `pods` pods, and runs an informer on a FakeClock until it synced. */
export async function startInformer(options: HarnessOptions = {}): Promise<Harness> {
  const server = await startFakeApiServer();
  for (let i = 0; i < (options.pods ?? 3); i++) server.create(PODS, pod(`pod-${i}`));
  options.seed?.(server);
  const clock = new FakeClock();
  const raw = newListWatch<Pod>(server.kubeConfig, PODS, { namespace: 'default', ...options.listWatch });
  const lw = options.wrap ? options.wrap(raw) : raw;
  const watchErrors: Reported[] = [];
  const handlerErrors: Array<HandlerError | IndexFuncError> = [];
  const handler = new HandlerRecorder({ name: 'recorder' });
  const informer = new SharedIndexInformer<Pod>(lw, {
    clock,
    logger: false, // every error is recorded below and asserted by the scenario
    onWatchError: (error, context) => watchErrors.push({ error, context }),
    onError: (err) => handlerErrors.push(err),
    ...options.informer,
    reflector: { random: () => 0, backoff: { initialMs: 100, maxMs: 100, jitter: 0 }, ...options.informer?.reflector },
  });
  informer.addEventHandler({
    onAdd: (obj) => handler.onAdd(obj as never),
    onUpdate: (oldObj, newObj) => handler.onUpdate(oldObj as never, newObj as never),
    onDelete: (obj) => handler.onDelete(obj as never),
  });
  for (const extra of options.handlers ?? []) informer.addEventHandler(extra);
  const controller = new AbortController();
  let failure: Error | undefined;
  const running = informer.run(controller.signal).catch((err: unknown) => {
    failure = err as Error;
  });
  let stopped = false;
  const keyOf = (p: Pod): string => `${p.metadata?.namespace}/${p.metadata?.name}`;
  const h: Harness = {
    server,
    clock,
    informer,
    watchErrors,
    handlerErrors,
    handler,
    async until(cond, what) {
      const deadline = Date.now() + 10_000;
      while (!cond()) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
        await clock.advance(100);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    },
    cache() {
      const out: Record<string, string> = {};
      for (const p of informer.getStore().list()) out[keyOf(p as Pod)] = (p as Pod).metadata?.resourceVersion ?? '';
      return out;
    },
    truth() {
      return Object.fromEntries(server.list<Pod>(PODS).map((p) => [keyOf(p), p.metadata?.resourceVersion ?? '']));
    },
    async converged(what) {
      const sorted = (o: Record<string, string>): string => JSON.stringify(Object.entries(o).sort());
      const same = (): boolean => {
        const truth = sorted(h.truth());
        return sorted(h.cache()) === truth && sorted(Object.fromEntries(handler.state())) === truth;
      };
      await h.until(same, what);
      expect(h.cache()).toEqual(h.truth());
      expect(handler.anomalies().count).toBe(0);
    },
    async stillRunning(name = 'proof-of-life') {
      const created = server.create(PODS, pod(name));
      await h.until(() => h.cache()[`default/${name}`] === created.metadata?.resourceVersion, `${name} to reach the cache`);
      expect(informer.isStopped()).toBe(false);
      expect(failure).toBeUndefined();
      await h.converged(`convergence after ${name}`);
    },
    codes: () => watchErrors.map((r) => String((r.error as { code?: unknown }).code)),
    async stop(expectFailure = false) {
      if (stopped) return failure;
      stopped = true;
      const i = open.indexOf(h);
      if (i >= 0) open.splice(i, 1);
      controller.abort();
      await running;
      raw.close();
      await server.close();
      if (!expectFailure) expect(failure).toBeUndefined();
      return failure;
    },
  };
  open.push(h);
  if (options.noSync !== true) await h.until(() => informer.hasSynced(), 'the first sync');
  return h;
}
