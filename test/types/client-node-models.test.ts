// docs/types.md's recipe for client-node model instances (Date timestamps) from cached JSON, and back: it must keep working.

import { describe, expect, expectTypeOf, it } from 'vitest';
import type { V1Pod } from '@kubernetes/client-node';
// Not a root export of client-node (1.4 or 2.0): its package has no "exports" map, so the path is reachable.
import { ObjectSerializer } from '@kubernetes/client-node/dist/serializer.js';
import type { Pod } from 'kubernetes-types/core/v1.js';
import { deepCopy, type DeepReadonly } from '../../src/index.js';

const cached: DeepReadonly<Pod> = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: 'web-0', namespace: 'default', creationTimestamp: '2024-01-02T03:04:05Z' },
  spec: { containers: [{ name: 'c', image: 'nginx' }] },
  status: { phase: 'Running', startTime: '2024-01-02T03:04:06Z' },
};

describe('client-node model instances from cached objects', () => {
  it('deserializes a copy of a cached pod into a V1Pod with Date timestamps', () => {
    const model: V1Pod = ObjectSerializer.deserialize(deepCopy(cached), 'V1Pod');
    expectTypeOf(model.metadata?.creationTimestamp).toEqualTypeOf<Date | undefined>();
    expect(model.metadata?.creationTimestamp).toBeInstanceOf(Date);
    expect(model.metadata?.creationTimestamp?.toISOString()).toBe('2024-01-02T03:04:05.000Z');
    expect(model.status?.startTime).toBeInstanceOf(Date);
    expect(model.spec?.containers[0]?.image).toBe('nginx');
  });

  it('serializes a V1Pod back to the JSON the cache holds', () => {
    const model: V1Pod = ObjectSerializer.deserialize(deepCopy(cached), 'V1Pod');
    const wire: Pod = ObjectSerializer.serialize(model, 'V1Pod');
    expect(wire.metadata?.creationTimestamp).toBe('2024-01-02T03:04:05.000Z');
    expect(wire.status?.phase).toBe('Running');
  });
});
