// useWatchList 'auto' (the default) against the real kube-apiserver: a streaming list where the WatchList
// feature gate is on (v1.37's default), a paged list where it is off (a private server with the gate off).

import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CoreV1Api } from '@kubernetes/client-node';
import { forgetWatchListSupport } from '../../src/listwatch/index.js';
import {
  SharedIndexInformer,
  newListWatch,
  type KubeListWatch,
  type KubeObject,
  type ListOptions,
  type ListerWatcher,
  type ObjectList,
  type WatchEvent,
} from '../../src/index.js';
import { startRealApiServer, type RealApiServer } from './harness.js';

const configmaps = { group: '', version: 'v1', resource: 'configmaps' };

/** Passes every request through, recording its options; names the same server as the one it wraps. */
class Recording<T> implements ListerWatcher<T> {
  readonly lists: ListOptions[] = [];
  readonly watches: ListOptions[] = [];
  readonly #inner: KubeListWatch<T>;

  constructor(inner: KubeListWatch<T>) {
    this.#inner = inner;
  }

  get serverIdentity(): string | undefined {
    return this.#inner.serverIdentity;
  }

  list(options: ListOptions, signal: AbortSignal): Promise<ObjectList<T>> {
    this.lists.push(options);
    return this.#inner.list(options, signal);
  }

  watch(options: ListOptions, signal: AbortSignal): Promise<AsyncIterable<WatchEvent<T>>> {
    this.watches.push(options);
    return this.#inner.watch(options, signal);
  }

  close(): void {
    this.#inner.close();
  }
}

/** Informers over `namespace`'s configmaps on `server`, started at once; each with what it sent, synced. */
async function syncInformers(server: RealApiServer, namespace: string, count: number, info: string[]) {
  const started = Array.from({ length: count }, (_, i) => {
    const lw = new Recording(newListWatch<KubeObject>(server.kubeConfig, configmaps, { namespace }));
    const informer = new SharedIndexInformer<KubeObject>(lw, {
      name: `configmaps-${i}`,
      logger: { debug: () => {}, info: (m: string) => void info.push(m), warn: (m: string) => void info.push(`WARN ${m}`), error: (m: string) => void info.push(`ERROR ${m}`) },
    });
    return { lw, informer };
  });
  const controller = new AbortController();
  const runs = started.map(({ informer }) => informer.run(controller.signal));
  await Promise.all(started.map(({ informer }) => informer.whenSynced(controller.signal)));
  return {
    started,
    stop: async (): Promise<void> => {
      controller.abort();
      await Promise.all(runs);
    },
  };
}

async function namespaceWith(server: RealApiServer, names: string[]): Promise<string> {
  const core = server.kubeConfig.makeApiClient(CoreV1Api);
  const namespace = `ki-wl-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  for (const name of names) await core.createNamespacedConfigMap({ namespace, body: { metadata: { name }, data: { v: '1' } } });
  return namespace;
}

describe("useWatchList 'auto' against the real kube-apiserver", () => {
  afterAll(() => forgetWatchListSupport());

  describe('with the WatchList feature gate on (v1.37.2 default)', () => {
    let server: RealApiServer;
    beforeAll(async () => {
      server = await startRealApiServer();
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('detects and uses streaming lists: one watch with sendInitialEvents per informer, and no list', async () => {
      const namespace = await namespaceWith(server, ['a', 'b']);
      const info: string[] = [];
      const { started, stop } = await syncInformers(server, namespace, 3, info);
      try {
        for (const { lw, informer } of started) {
          expect(informer.getStore().listKeys().sort()).toEqual([`${namespace}/a`, `${namespace}/b`]);
          expect(lw.lists).toEqual([]);
          expect(lw.watches[0]).toMatchObject({ sendInitialEvents: true, resourceVersionMatch: 'NotOlderThan', allowWatchBookmarks: true });
          expect(informer.health().watch.listMode).toBe('streaming');
          expect(informer.health().counters.errors).toBe(0);
        }
        expect(info.filter((m) => /streaming lists|WARN|ERROR/.test(m))).toEqual([]);
      } finally {
        await stop();
      }
    });
  });

  describe('with the WatchList feature gate off', () => {
    let server: RealApiServer;
    beforeAll(async () => {
      server = await startRealApiServer({ private: true, apiServerArgs: ['--feature-gates=WatchList=false'] });
    });
    afterAll(async () => {
      await server?.stop();
    });

    it('pages: of four informers started at once, one streaming request (refused 422), one info line, then paged lists for all', async () => {
      const namespace = await namespaceWith(server, ['a', 'b']);
      const info: string[] = [];
      const { started, stop } = await syncInformers(server, namespace, 4, info);
      try {
        const streamed = started.flatMap(({ lw }) => lw.watches.filter((w) => w.sendInitialEvents === true));
        expect(streamed).toHaveLength(1);
        for (const { lw, informer } of started) {
          expect(informer.getStore().listKeys().sort()).toEqual([`${namespace}/a`, `${namespace}/b`]);
          expect(lw.lists).toHaveLength(1);
          expect(informer.health().watch.listMode).toBe('paged');
          expect(informer.health().counters.errors).toBe(0);
        }
        const lines = info.filter((m) => /streaming lists|WARN|ERROR/.test(m));
        expect(lines).toHaveLength(1);
        expect(lines[0]).toMatch(/does not serve streaming lists \(.*sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled.*\); lists are paged for https:\/\/127\.0\.0\.1:\d+ /);
      } finally {
        await stop();
      }
    });
  });
});
