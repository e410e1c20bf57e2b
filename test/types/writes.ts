// Type-level tests of the writing API (checked by tsc): apply configurations need their identity; delete's answer is a union, never T.

import type { ConfigMap } from 'kubernetes-types/core/v1.js';
import type { DeleteResult, ResourceClient, Status } from '../../src/index.js';
import type { ApplyConfiguration } from '../../src/objects.js';

declare const client: ResourceClient<ConfigMap>;

export async function checks(): Promise<void> {
  // A deep-partial of the resource with the identity: fine.
  await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns', labels: { a: 'b' } }, data: { k: 'v' } });
  // @ts-expect-error -- no kind
  await client.apply({ apiVersion: 'v1', metadata: { name: 'c', namespace: 'ns' } });
  // @ts-expect-error -- no metadata.name
  await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns' } });
  // @ts-expect-error -- data values are strings
  await client.apply({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c', namespace: 'ns' }, data: { k: 1 } });
  const partial: ApplyConfiguration<ConfigMap> = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
  void partial;

  const result: DeleteResult<ConfigMap> = await client.delete('c', 'ns');
  // @ts-expect-error -- the answer is not the object until narrowed
  void result.metadata;
  if (result.gone) {
    const status: Status | undefined = result.status;
    void status;
  } else {
    const obj: ConfigMap = result.object;
    void obj;
  }
}
