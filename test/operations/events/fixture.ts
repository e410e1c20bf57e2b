// The Event recorder's test bench: a fake API server over HTTP, a FakeClock, a log that keeps its lines, and recorders stopped after each test.

import { afterEach, beforeEach, expect } from 'vitest';
import { FakeClock, flushPromises, type KubeObject } from '../../../src/core/index.js';
import { EventRecorder, eventsV1Resource, type EventRecorderOptions, type EventsV1Event } from '../../../src/operations/events/index.js';
import { startFakeApiServer, type FakeApiServer } from '../../../src/testing/index.js';
import { memoryLog } from '../../controller/fixture.js';

export { until } from '../../examples/helpers.js';

export const CONTROLLER = 'example.com/widget-controller';

export function widget(name: string, namespace = 'ns'): KubeObject {
  return { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name, namespace, uid: `uid-${name}`, resourceVersion: '7' } };
}

export interface Bench {
  server: FakeApiServer;
  clock: FakeClock;
  log: ReturnType<typeof memoryLog>;
  /** A recorder on the bench's server, clock and log; `run` starts it (stopped after the test). */
  recorder(options?: Partial<EventRecorderOptions>): EventRecorder;
  /** Runs `recorder` until `stop()` (or the end of the test); resolves with `run`'s promise. */
  run(recorder: EventRecorder): { done: Promise<void>; stop: () => Promise<void> };
  /** The Events stored in `namespace` (in no particular order). */
  events(namespace?: string): EventsV1Event[];
  /** The requests that wrote Events: `POST` and `PATCH <name>`, in order. */
  writes(): string[];
}

export function bench(): Bench {
  const b = {} as Bench;
  const stops: Array<() => Promise<void>> = [];
  beforeEach(async () => {
    const server = await startFakeApiServer();
    const clock = new FakeClock();
    const log = memoryLog();
    Object.assign(b, {
      server,
      clock,
      log,
      recorder: (options: Partial<EventRecorderOptions> = {}) =>
        new EventRecorder(server.kubeConfig, { reportingController: CONTROLLER, reportingInstance: 'widgets-0', clock, logger: log.logger, ...options }),
      run: (recorder: EventRecorder) => {
        const ac = new AbortController();
        let settled = false;
        const done = recorder.run(ac.signal).finally(() => {
          settled = true;
        });
        const stop = async (): Promise<void> => {
          ac.abort();
          await flushPromises();
          // The drain runs on the fake clock: let it time out if a test left a write hanging.
          for (let i = 0; i < 100 && !settled; i++) await clock.advance(1_000);
          await done;
        };
        stops.push(stop);
        return { done, stop };
      },
      events: (namespace = 'ns') => server.list<EventsV1Event & KubeObject>(eventsV1Resource, namespace),
      writes: () => server.requests().filter((r) => r.resource === 'events' && r.method !== 'GET').map((r) => `${r.method} ${r.name ?? ''}`.trim()),
    });
  });
  afterEach(async () => {
    for (const stop of stops.splice(0)) await stop();
    expect(b.clock.pendingTimers()).toBe(0); // nothing left behind on the clock
    await b.server.close(); // and the server closes: no connection held open
  });
  return b;
}
