// A paged list's pages are offered to the store (STAGE_LIST_PAGE) while the next page is on its way, so
// that what its replace needs is not all computed after the last page; an ended list lets go of them.

import { describe, expect, it } from 'vitest';
import type { ObjectList } from '../../src/listwatch/types.js';
import { STAGE_LIST_PAGE } from '../../src/reflector/types.js';
import { Reflector } from '../../src/reflector/reflector.js';
import { FakeClock } from '../../src/core/clock.js';
import { gone, pod, podList, RecordingStore, ScriptedLW, settle } from './helpers.js';
import type { Pod } from './helpers.js';

const pods = (from: number, n: number): Pod[] => Array.from({ length: n }, (_, i) => pod(`p${from + i}`, String(from + i)));

/** A recording store that also records what it was offered to stage, and how many list requests had been sent by then. */
class StagingStore extends RecordingStore<Pod> {
  constructor(private readonly lw: ScriptedLW<Pod>) {
    super();
  }
  [STAGE_LIST_PAGE](items: readonly Pod[] | undefined, first: boolean): void {
    const sent = this.lw.requests.filter((r) => r.kind === 'list').length;
    this.ops.push(items === undefined ? 'unstage' : `stage${first ? ' first' : ''} [${items.map((p) => p.metadata.name).join(',')}] after request ${sent}`);
  }
}

/** An answer that comes a few event-loop turns after the request, as a server's would. */
const later = (answer: ObjectList<Pod> | Error) => async (): Promise<ObjectList<Pod>> => {
  await settle();
  if (answer instanceof Error) throw answer;
  return answer;
};

function setup(pageSize: number): { lw: ScriptedLW<Pod>; store: StagingStore; run: () => Promise<void>; stop: () => Promise<void> } {
  const lw = new ScriptedLW<Pod>();
  const store = new StagingStore(lw);
  const controller = new AbortController();
  const reflector = new Reflector<Pod>(lw, store, { clock: new FakeClock(), random: () => 0, pageSize, onError: () => undefined });
  let running: Promise<void> | undefined;
  return {
    lw,
    store,
    run: async () => {
      running = reflector.run(controller.signal);
      // Until the list ended (replaced, or abandoned by a failure), or a bound of turns.
      for (let i = 0; i < 20 && !store.ops.some((op) => op.startsWith('replace') || op === 'unstage'); i++) await settle();
      await settle();
    },
    stop: async () => {
      controller.abort();
      await running;
    },
  };
}

describe('Reflector: staging a paged list', () => {
  it('offers each page but the last once the next page was asked for, then replaces and lets go', async () => {
    const h = setup(2);
    h.lw.lists.push(later(podList('10', pods(1, 2), 'C1')), later(podList('10', pods(3, 2), 'C2')), later(podList('10', pods(5, 1))));
    await h.run();
    expect(h.store.ops).toEqual([
      'stage first [p1,p2] after request 2',
      'stage [p3,p4] after request 3',
      'replace@10 [p1,p2,p3,p4,p5]',
      'unstage',
    ]);
    await h.stop();
  });

  it('stages nothing for a list of one page', async () => {
    const h = setup(2);
    h.lw.lists.push(later(podList('10', pods(1, 2))));
    await h.run();
    expect(h.store.ops).toEqual(['replace@10 [p1,p2]']);
    await h.stop();
  });

  it('does not stage a page whose next page was answered first: replace computes it', async () => {
    const h = setup(2);
    // Answered at once: the page comes before the staging's turn, which is then dropped.
    h.lw.lists.push(podList('10', pods(1, 2), 'C1'), podList('10', pods(3, 1)));
    await h.run();
    expect(h.store.ops).toEqual(['replace@10 [p1,p2,p3]']);
    await h.stop();
  });

  it('lets go of the staged pages when a continue page expires, and stages nothing of the unpaged list', async () => {
    const h = setup(2);
    h.lw.lists.push(later(podList('10', pods(1, 2), 'C1')), later(gone('continue expired')), later(podList('10', pods(1, 3))));
    await h.run();
    await settle();
    expect(h.store.ops).toEqual(['stage first [p1,p2] after request 2', 'unstage', 'replace@10 [p1,p2,p3]']);
    await h.stop();
  });

  it('lets go of the staged pages when stopped while paging', async () => {
    const h = setup(2);
    h.lw.lists.push(later(podList('10', pods(1, 2), 'C1'))); // the next page never comes
    await h.run();
    expect(h.store.ops).toEqual(['stage first [p1,p2] after request 2']);
    await h.stop();
    expect(h.store.ops).toEqual(['stage first [p1,p2] after request 2', 'unstage']);
  });
});

