// Custom resources defined once (kube-informer/crd) on the real kube-apiserver: the CRDs are Established, the server rejects exactly what the client-side validator rejects, and defaults agree.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { parseAllDocuments } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { ApiStatusError, newResourceClient, resources, SharedInformerFactory } from '../../src/index.js';
import { Manager } from '../../src/operations/index.js';
import { ApplyConflictError } from '../../src/objects.js';
import { CustomResourceDefinitionError, Type, defineCustomResource, ensureCustomResourceDefinitions, validateObject } from '../../src/crd/index.js';
import { parseCrds } from '../../src/crd/cli.js';
import { runCommand } from '../../src/cli/index.js';
import { fixtures, sets } from '../crd/examples-gen.js';
import { gadgets, objectOf, rows, widgets } from '../crd/definitions.js';
import { startRealApiServer, type RealApiServer } from './harness.js';

/** The field paths of a 422 answer's causes, `<root>` for the object itself. */
function serverFields(err: unknown): string[] {
  if (!(err instanceof ApiStatusError)) throw err;
  const causes = (err.status as { details?: { causes?: { field?: string }[] } }).details?.causes ?? [];
  return causes.map((c) => (c.field === undefined || c.field === '' ? '<root>' : c.field));
}

function serverMessages(err: unknown): string[] {
  const causes = ((err as ApiStatusError).status as { details?: { causes?: { field?: string; message?: string }[] } }).details?.causes ?? [];
  return causes.map((c) => `${c.field}: ${c.message}`);
}

describe('custom resources defined once, on the real kube-apiserver', () => {
  let server: RealApiServer;
  const namespace = `ki-crd-${randomBytes(3).toString('hex')}`;

  beforeAll(async () => {
    server = await startRealApiServer();
    const namespaces = newResourceClient(server.kubeConfig, resources.namespaces);
    await namespaces.create({ metadata: { name: namespace } });
    namespaces.close();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('installs every generated CRD (CEL, defaults, int-or-string, two versions, columns, subresources) and each becomes Established', async () => {
    const client = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    const installed = await ensureCustomResourceDefinitions(client, [widgets, gadgets]);
    expect(installed.map((c) => c.status?.conditions?.find((x) => x.type === 'Established')?.status)).toEqual(['True', 'True']);
    expect(installed[0].spec.versions.map((v) => v.name)).toEqual(['v1', 'v1beta1']);
    // `kube-informer crd types --name` reads the installed CRD back and types it.
    let out = '';
    const code = await runCommand(['crd', 'types', '--name', 'widgets.crdtest.kube-informer.dev', '--kubeconfig', server.kubeConfigPath], { stdout: (t) => (out += t), stderr: () => undefined, cwd: process.cwd(), env: process.env });
    expect(code).toBe(0);
    expect(out).toContain('export interface WidgetV1 {');
    expect(out).toContain('color: "red" | "green" | "blue";');
    expect(out).toContain('maxUnavailable?: number | string;');
    // A second call updates in place and still resolves.
    const again = await ensureCustomResourceDefinitions(client, [widgets]);
    expect(again[0].metadata?.name).toBe('widgets.crdtest.kube-informer.dev');
    client.close();
  });

  it('installs by server-side apply: owns what it sets, names a conflict without force, takes the fields with force, removes what it no longer sets', async () => {
    const client = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    const define = (shortNames?: string[]) =>
      defineCustomResource({ group: 'crdtest.kube-informer.dev', names: { kind: 'Sprocket', ...(shortNames === undefined ? {} : { shortNames }) }, versions: { v1: { spec: Type.Object({ teeth: Type.Integer() }) } } });
    const name = 'sprockets.crdtest.kube-informer.dev';
    const [first] = await ensureCustomResourceDefinitions(client, [define(['spr'])]);
    expect(first.metadata?.managedFields?.filter((f) => f.operation === 'Apply').map((f) => f.manager)).toEqual(['kube-informer']);
    // Another manager (kubectl apply --server-side --force-conflicts) takes spec.names.shortNames.
    await client.apply({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name }, spec: { names: { plural: 'sprockets', kind: 'Sprocket', shortNames: ['sp'] } } } as never, { fieldManager: 'kubectl', force: true });
    const conflict = await ensureCustomResourceDefinitions(client, [define(['spr'])], { force: false }).catch((e: unknown) => e);
    expect(conflict).toBeInstanceOf(CustomResourceDefinitionError);
    expect((conflict as CustomResourceDefinitionError).causes).toEqual(['.spec.names.shortNames: owned by kubectl']);
    expect((conflict as Error).cause).toBeInstanceOf(ApplyConflictError);
    // The default, force, takes the field back.
    const [forced] = await ensureCustomResourceDefinitions(client, [define(['spr'])]);
    expect(forced.spec.names.shortNames).toEqual(['spr']);
    // A definition that no longer sets shortNames removes them (the field manager owned them alone).
    const [dropped] = await ensureCustomResourceDefinitions(client, [define()]);
    expect(dropped.spec.names.shortNames).toBeUndefined();
    // With its own field manager.
    const [other] = await ensureCustomResourceDefinitions(client, [define()], { fieldManager: 'my-operator' });
    expect(other.metadata?.managedFields?.filter((f) => f.operation === 'Apply').map((f) => f.manager).sort()).toEqual(['kube-informer', 'kubectl', 'my-operator']);
    client.close();
  });

  it('rejects exactly the objects the client-side validator rejects, naming the same fields (the server is the oracle)', async () => {
    const client = newResourceClient(server.kubeConfig, widgets.descriptor);
    const report: string[] = [];
    let messagesEqual = 0;
    let rejected = 0;
    for (const [i, row] of rows.entries()) {
      const obj = objectOf(row, i, namespace);
      const local = widgets.validate(obj);
      let fields: string[] = [];
      let err: unknown;
      try {
        const created = (await client.create(obj as never)) as { spec?: unknown };
        // Accepted: the server stored what the client-side validator says it would (pruned, defaulted).
        if (!isDeepStrictEqual(created.spec, (local.object as { spec?: unknown }).spec)) {
          report.push(`stored ${row.title}: server ${JSON.stringify(created.spec)}, client ${JSON.stringify((local.object as { spec?: unknown }).spec)}`);
        }
      } catch (e) {
        err = e;
        fields = serverFields(e);
      }
      if (fields.length > 0) rejected++;
      const localFields = local.errors.map((e) => e.field);
      // Where only CEL rejects, the client says the rule went unchecked instead.
      const expected = row.cel === true ? [] : fields;
      if (row.cel === true) expect(local.unchecked.length, row.title).toBeGreaterThan(0);
      if (JSON.stringify([...localFields].sort()) !== JSON.stringify([...expected].sort())) {
        report.push(`${row.title}: server ${JSON.stringify(fields)} ${JSON.stringify(err === undefined ? [] : serverMessages(err))}, client ${JSON.stringify(localFields)}`);
      }
      if (JSON.stringify([...fields].sort()) !== JSON.stringify([...row.fields].sort())) report.push(`table ${row.title}: server ${JSON.stringify(fields)} ${JSON.stringify(err === undefined ? [] : serverMessages(err))}, table ${JSON.stringify(row.fields)}`);
      if (err !== undefined && row.cel !== true) {
        const server = serverMessages(err).sort();
        const mine = local.errors.map((e) => e.message).sort();
        if (JSON.stringify(server) === JSON.stringify(mine)) messagesEqual++;
        else report.push(`message ${row.title}: server ${JSON.stringify(server)} client ${JSON.stringify(mine)}`);
      }
    }
    console.log(`crd oracle: ${rows.length} objects, ${rejected} rejected by the server, ${messagesEqual} with identical messages, ${rows.length - rejected} stored exactly as the client predicted\n${report.join('\n')}`);
    expect(report).toEqual([]);
    expect(rows.length).toBeGreaterThanOrEqual(50);
    client.close();
  });

  it('applies the same defaults as the schema, in both versions', async () => {
    const v1 = newResourceClient(server.kubeConfig, widgets.descriptor);
    const obj = { apiVersion: 'crdtest.kube-informer.dev/v1', kind: 'Widget', metadata: { name: 'defaults', namespace }, spec: { name: 'ab', ports: [{ name: 'p', port: 1 }], size: null } };
    const created = await v1.create(obj as never);
    expect(created.spec).toEqual(widgets.withDefaults(obj).spec);
    expect(created.spec).toMatchObject({ size: 1, color: 'red', enabled: true, maxUnavailable: '25%', minReplicas: 1, maxReplicas: 3, ports: [{ protocol: 'TCP' }] });
    const beta = newResourceClient(server.kubeConfig, widgets.descriptors.v1beta1);
    const old = { apiVersion: 'crdtest.kube-informer.dev/v1beta1', kind: 'Widget', metadata: { name: 'beta', namespace }, spec: {} };
    const createdOld = await beta.create(old as never);
    expect(createdOld.spec).toEqual(widgets.withDefaults(old, 'v1beta1').spec);
    expect(createdOld.spec).toEqual({ size: 2 });
    const gadgetClient = newResourceClient(server.kubeConfig, gadgets.descriptor);
    await expect(gadgetClient.create({ apiVersion: 'crdtest.kube-informer.dev/v1alpha1', kind: 'Gadget', metadata: { name: 'g' }, spec: { mode: 'warp', budget: 0.1 } } as never)).rejects.toSatisfy(
      (e) => JSON.stringify(serverFields(e).sort()) === JSON.stringify(gadgets.validate({ spec: { mode: 'warp', budget: 0.1 } }).errors.map((x) => x.field).sort()),
    );
    v1.close();
    beta.close();
    gadgetClient.close();
  });

  it('serves the status and scale subresources the definition declares', async () => {
    const v1 = newResourceClient(server.kubeConfig, widgets.descriptor);
    const created = await v1.create({ apiVersion: 'crdtest.kube-informer.dev/v1', kind: 'Widget', metadata: { name: 'sub', namespace }, spec: { name: 'ab', size: 4 } } as never);
    const withStatus = await v1.replaceStatus({ ...created, status: { replicas: 4, selector: 'app=x', phase: 'Ready' } });
    expect(withStatus.status).toEqual({ replicas: 4, selector: 'app=x', phase: 'Ready' });
    const custom = server.kubeConfig.makeApiClient(CustomObjectsApi);
    const s = (await custom.getNamespacedCustomObjectScale({ group: 'crdtest.kube-informer.dev', version: 'v1', namespace, plural: 'widgets', name: 'sub' })) as { spec?: { replicas?: number }; status?: { replicas?: number; selector?: string } };
    expect(s).toMatchObject({ spec: { replicas: 4 }, status: { replicas: 4, selector: 'app=x' } });
    v1.close();
  });

  it('installs the real CRDs (Gateway API, Prometheus operator, cert-manager); the server and the client-side validator accept their example objects and store the same', async () => {
    const crdClient = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    const crds = sets.flatMap((set) => set.crds.flatMap((file) => parseCrds(readFileSync(join(fixtures, set.name, file), 'utf8'), file)));
    // cert-manager's CRD carries Helm template text in its labels (the server refuses those labels, rightly): install without the labels.
    const installed = await ensureCustomResourceDefinitions(crdClient, crds.map((c) => ({ ...c, metadata: { name: c.metadata?.name, annotations: c.metadata?.annotations } })));
    expect(installed).toHaveLength(crds.length);
    crdClient.close();
    let checked = 0;
    for (const set of sets) {
      for (const file of set.examples) {
        for (const doc of parseAllDocuments(readFileSync(join(fixtures, set.name, file), 'utf8'))) {
          const obj = doc.toJS() as { apiVersion?: string; kind?: string; metadata?: { namespace?: string } } | null;
          const crd = crds.find((c) => c.spec.names.kind === obj?.kind && obj?.apiVersion?.startsWith(`${c.spec.group}/`));
          if (obj === null || crd === undefined) continue;
          const versionName = obj.apiVersion?.split('/')[1];
          const version = crd.spec.versions.find((v) => v.name === versionName);
          const descriptor = { group: crd.spec.group, version: versionName ?? '', resource: crd.spec.names.plural, kind: crd.spec.names.kind, namespaced: crd.spec.scope === 'Namespaced' };
          if (descriptor.namespaced) obj.metadata = { ...obj.metadata, namespace };
          const local = validateObject(version?.schema?.openAPIV3Schema as never, obj);
          expect(local.errors, `${file} ${obj.kind}`).toEqual([]);
          const client = newResourceClient(server.kubeConfig, descriptor);
          const created = (await client.create(obj as never)) as { spec?: unknown };
          client.close();
          expect(created.spec, `${file} ${obj.kind}`).toEqual((local.object as { spec?: unknown }).spec);
          checked++;
        }
      }
    }
    expect(checked).toBe(10);
  });

  it('the Manager installs its crds before the informers start (the informer of the custom resource lists once, no 404), and rejects run() at once when the server refuses one', async () => {
    const cogs = defineCustomResource({ group: 'crdtest.kube-informer.dev', names: { kind: 'Cog' }, versions: { v1: { spec: Type.Object({ teeth: Type.Integer({ minimum: 1 }) }) } } });
    const errors: Error[] = [];
    const factory = new SharedInformerFactory(server.kubeConfig, { logger: false, informerOptions: { onWatchError: (err) => errors.push(err) } });
    const informer = factory.forResource(cogs.descriptor);
    let running = 0;
    const controller = { name: 'cogs', run: (s: AbortSignal) => new Promise<void>((resolve) => (running++, s.addEventListener('abort', () => resolve(), { once: true }))) };
    const manager = new Manager(factory, { crds: [cogs], controllers: [controller], logger: false });
    const stop = new AbortController();
    const run = manager.run(stop.signal);
    for (let i = 0; i < 200 && running === 0; i++) await new Promise((resolve) => setTimeout(resolve, 50));
    expect(running).toBe(1);
    // One list, and never the 404 of a resource not served yet. Right after a CRD is Established,
    // kube-apiserver may answer the streaming list's watch 429 "storage is (re)initializing" (its watch
    // cache of the new resource is starting): the reflector then lists, paged, at once — that one is
    // the only error allowed.
    expect(informer.health().counters).toMatchObject({ lists: 1 });
    const described = errors.map((e) => `${(e as { statusCode?: number }).statusCode ?? e.name} ${e.message}`);
    expect(described.filter((e) => !/^429 watch .*sendInitialEvents=true.*storage is \(re\)initializing/.test(e))).toEqual([]);
    stop.abort();
    await run;

    const broken = defineCustomResource({ group: 'crdtest.kube-informer.dev', names: { kind: 'Brokencog' }, versions: { v1: { spec: Type.Object({ a: Type.String() }, { 'x-kubernetes-validations': [{ rule: 'self.a ==' }] }) } } });
    const factory2 = new SharedInformerFactory(server.kubeConfig, { logger: false });
    factory2.forResource(broken.descriptor);
    const started = performance.now();
    const err = await new Manager(factory2, { crds: [broken], logger: false }).run(new AbortController().signal).catch((e: unknown) => e);
    console.log(`crd manager refusal: run() rejected ${Math.round(performance.now() - started)} ms after the start`);
    expect(err).toBeInstanceOf(CustomResourceDefinitionError);
    expect((err as CustomResourceDefinitionError).causes.join('\n')).toContain('x-kubernetes-validations[0].rule');
  });

  it('refuses a CRD the server rejects with a CustomResourceDefinitionError naming its field errors', async () => {
    const client = newResourceClient(server.kubeConfig, resources.customresourcedefinitions);
    const def = defineCustomResource({ group: 'crdtest.kube-informer.dev', names: { kind: 'Broken' }, versions: { v1: { spec: Type.Object({ a: Type.String() }, { 'x-kubernetes-validations': [{ rule: 'self.a ==' }] }) } } });
    const err = await ensureCustomResourceDefinitions(client, [def]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CustomResourceDefinitionError);
    expect((err as CustomResourceDefinitionError).causes.join('\n')).toContain('x-kubernetes-validations[0].rule');
    console.log(`crd refusal causes: ${JSON.stringify((err as CustomResourceDefinitionError).causes)}`);
    client.close();
  });
});
