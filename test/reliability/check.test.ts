// The soak's checker can fail: divergences, lost events, keys going back and bad histories are all caught.
import { describe, expect, it } from 'vitest';
import { DeletedFinalStateUnknown } from '../../src/core/keys.js';
import { describeDivergence, diffStates, resourcesBeyond } from '../../soak/check.js';
import { FAULT_KINDS, parseFaultKinds } from '../../soak/faults.js';
import { Prng } from '../../soak/prng.js';
import { HandlerRecorder } from '../../soak/recorder.js';
import type { SoakObject } from '../../soak/workload.js';

const cm = (name: string, rv: string, ns = 'ns'): SoakObject => ({ metadata: { name, namespace: ns, resourceVersion: rv } });

describe('the soak checker', () => {
  it('finds a missing key, an extra key and a stale resource version, sorted by key', () => {
    const server = new Map([
      ['ns/a', '5'],
      ['ns/b', '7'],
    ]);
    const informer = new Map([
      ['ns/b', '6'],
      ['ns/c', '3'],
    ]);
    const found = diffStates('store', server, informer);
    expect(found.map(describeDivergence)).toEqual([
      'store: ns/a is missing (server has rv 5)',
      'store: ns/b has rv 6, server has rv 7',
      'store: ns/c (rv 3) no longer exists on the server',
    ]);
    expect(diffStates('store', server, new Map(server))).toEqual([]);
  });

  it('replays a handler history into a map, tombstones included', () => {
    const h = new HandlerRecorder({ name: 'h' });
    void h.onAdd(cm('a', '1'));
    void h.onAdd(cm('b', '2'));
    void h.onUpdate(cm('a', '1'), cm('a', '3'));
    void h.onDelete(new DeletedFinalStateUnknown('ns/b', cm('b', '2')));
    expect([...h.state()]).toEqual([['ns/a', '3']]);
    expect(h.anomalies().count).toBe(0);
    expect(h.counts()).toEqual({ add: 2, update: 1, delete: 1 });
  });

  it('flags a key seen going back to an older resource version', () => {
    const h = new HandlerRecorder({ name: 'h' });
    void h.onAdd(cm('a', '10'));
    void h.onDelete(cm('a', '9'));
    const a = h.anomalies();
    expect(a.count).toBe(1);
    expect(a.byKind['rv-regression']).toBe(1);
    expect(a.first[0]).toMatchObject({ kind: 'rv-regression', key: 'ns/a' });
  });

  it('flags an add of a present key, an update or delete of an absent key, and a stale old object', () => {
    const h = new HandlerRecorder({ name: 'h' });
    void h.onAdd(cm('a', '1'));
    void h.onAdd(cm('a', '2'));
    void h.onUpdate(undefined, cm('b', '3'));
    void h.onDelete(cm('c', '4'));
    void h.onUpdate(cm('a', '1'), cm('a', '5'));
    expect(h.anomalies().first.map((x) => x.kind)).toEqual(['add-of-present-key', 'update-of-absent-key', 'delete-of-absent-key', 'stale-old-object']);
  });

  it('reports only the resources beyond the baseline', () => {
    expect(resourcesBeyond({ TCPServerWrap: 1, Timeout: 2 }, { TCPServerWrap: 1, Timeout: 3, TCPSocketWrap: 1 })).toEqual({ Timeout: 1, TCPSocketWrap: 1 });
    expect(resourcesBeyond({ Timeout: 2 }, { Timeout: 1 })).toEqual({});
  });

  it('draws the same sequence from the same seed and parses fault lists strictly', () => {
    const a = new Prng(42);
    const b = new Prng(42);
    const seqA = Array.from({ length: 5 }, () => a.int(0, 1000));
    expect(Array.from({ length: 5 }, () => b.int(0, 1000))).toEqual(seqA);
    expect(Array.from({ length: 5 }, () => new Prng(43).int(0, 1000))).not.toEqual(seqA);
    expect(parseFaultKinds('all')).toEqual([...FAULT_KINDS]);
    expect(parseFaultKinds('stall,http-500')).toEqual(['stall', 'http-500']);
    expect(() => parseFaultKinds('stall,meteor')).toThrow(/unknown fault "meteor"/);
  });
});
