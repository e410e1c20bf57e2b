// readCustomResourceDefinitionFiles: CRDs read from YAML as plain data, as kubectl reads them, and every bad file named.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { CustomResourceDefinitionFileError, readCustomResourceDefinitionFiles } from '../../src/crd/index.js';

const fixture = fileURLToPath(new URL('../apiserver/fixtures/ranges-crd.yaml', import.meta.url));
const root = mkdtempSync(join(tmpdir(), 'crd-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** Writes `text` to a fresh file (or the files of a fresh directory) and returns its path. */
function write(text: string | Record<string, string>): string {
  const path = join(root, `case-${n++}`);
  if (typeof text === 'string') {
    writeFileSync(`${path}.yaml`, text);
    return `${path}.yaml`;
  }
  mkdirSync(path);
  for (const [name, body] of Object.entries(text)) writeFileSync(join(path, name), body);
  return path;
}

const crd = (name: string): string => `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: ${name}.example.com
spec:
  group: example.com
  names: { plural: ${name}, kind: K${name} }
  scope: Namespaced
  versions: [{ name: v1, served: true, storage: true, schema: { openAPIV3Schema: { type: object } } }]
`;

function failure(path: string): CustomResourceDefinitionFileError {
  try {
    readCustomResourceDefinitionFiles(path);
  } catch (err) {
    expect(err).toBeInstanceOf(CustomResourceDefinitionFileError);
    expect(err).toMatchObject({ code: 'CRD_FILE_INVALID' });
    return err as CustomResourceDefinitionFileError;
  }
  throw new Error(`${path} was read without an error`);
}

describe('readCustomResourceDefinitionFiles', () => {
  it('keeps `default` and `x-kubernetes-validations` verbatim (client-node loadAllYaml renamed them)', () => {
    const [read] = readCustomResourceDefinitionFiles(fixture);
    const spec = read?.spec.versions[0]?.schema?.openAPIV3Schema?.properties?.spec as Record<string, unknown> & { properties: Record<string, unknown> };
    expect(spec['x-kubernetes-validations']).toEqual([{ rule: 'self.min <= self.max', message: 'min must not exceed max' }]);
    expect(spec.properties.retention).toEqual({ type: 'string', default: '7d' });
    expect(JSON.stringify(read)).not.toMatch(/_default|x_kubernetes/);
  });

  it('resolves anchors and << merge keys as kubectl does', () => {
    const path = write(`apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: { name: merged.example.com }
spec:
  group: example.com
  names: { plural: merged, kind: Merged }
  scope: Namespaced
  versions:
    - &v1
      name: v1
      served: true
      storage: true
      schema:
        openAPIV3Schema:
          type: object
          properties:
            spec: &spec { type: object, properties: { size: { type: integer, default: 1 } } }
    - <<: *v1
      name: v2
      storage: false
`);
    const [read] = readCustomResourceDefinitionFiles(path);
    expect(read?.spec.versions.map((v) => [v.name, v.served, v.storage])).toEqual([['v1', true, true], ['v2', true, false]]);
    expect(read?.spec.versions[1]?.schema).toEqual(read?.spec.versions[0]?.schema);
    expect(read?.spec.versions[1]?.schema?.openAPIV3Schema?.properties?.spec?.properties?.size).toEqual({ type: 'integer', default: 1 });
  });

  it('reads YAML 1.1 scalars as kubectl does (yes/on are booleans), and a timestamp as the string written', () => {
    const path = write(`${crd('scalars')}  preserveUnknownFields: no\n  conversion: { strategy: None }\nmetadata2: { created: 2024-01-02 }\n`);
    const [read] = readCustomResourceDefinitionFiles(path) as unknown as [{ spec: { preserveUnknownFields: unknown }; metadata2: { created: unknown } }];
    expect(read.spec.preserveUnknownFields).toBe(false);
    expect(read.metadata2.created).toBe('2024-01-02');
  });

  it('skips empty documents (`---` with nothing, or only comments) as kubectl does', () => {
    const path = write(`---\n---\n# nothing here\n---\n${crd('first')}---\n\n---\n${crd('second')}---\n`);
    expect(readCustomResourceDefinitionFiles(path).map((c) => c.metadata?.name)).toEqual(['first.example.com', 'second.example.com']);
  });

  it('gives the items of a kind: List, as kubectl does', () => {
    const list = `apiVersion: v1\nkind: List\nitems:\n${crd('listed').replace(/^/gm, '    ').replace(/^ {4}apiVersion/, '  - apiVersion')}`;
    expect(readCustomResourceDefinitionFiles(write(list)).map((c) => c.metadata?.name)).toEqual(['listed.example.com']);
  });

  it('refuses a document that is not a CRD, naming the file, the document, its line and its kind', () => {
    const path = write(`${crd('one')}---\napiVersion: v1\nkind: ConfigMap\nmetadata: { name: extra }\n`);
    const err = failure(path);
    expect(err.message).toBe(
      `${path}:11: document 2 is a ConfigMap (v1), not a CustomResourceDefinition. A CRD file holds CRDs only (kubectl would apply it, this would not): move it out, or create it in the test`,
    );
    expect(err).toMatchObject({ path, document: 2, line: 11 });
  });

  it('refuses a document that is not an object', () => {
    expect(failure(write(`${crd('one')}---\n- a\n- b\n`)).message).toContain(':11: document 2 is not an object (a list), not a CustomResourceDefinition');
  });

  it('refuses invalid YAML, naming the file, the line and the column', () => {
    const path = write(`${crd('one')}---\napiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nspec: [1, 2\nmetadata: {}\n`);
    const err = failure(path);
    expect(err.message).toMatch(new RegExp(`^${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:14:1: document 2 is not valid YAML: `));
    expect(err).toMatchObject({ document: 2, line: 14 });
  });

  it('refuses a key written twice in one mapping', () => {
    expect(failure(write(`${crd('one')}kind: CustomResourceDefinition\n`)).message).toMatch(/:10:1: document 1 is not valid YAML: Map keys must be unique/);
  });

  it('reads the .yaml, .yml and .json files of a directory in name order and ignores the others', () => {
    const dir = write({
      'b.yml': crd('bee'),
      'a.yaml': crd('ay'),
      'c.json': JSON.stringify({ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: 'sea.example.com' } }),
      'README.md': '# not YAML: ignored\n',
      'notes.txt': 'kind: ConfigMap\n',
    });
    expect(readCustomResourceDefinitionFiles(dir).map((c) => c.metadata?.name)).toEqual(['ay.example.com', 'bee.example.com', 'sea.example.com']);
  });

  it('refuses a path that does not exist', () => {
    const err = failure(join(root, 'no-such-dir'));
    expect(err.message).toBe(`${join(root, 'no-such-dir')} does not exist (a relative path is resolved from the working directory, ${process.cwd()})`);
  });

  it('refuses a file or a directory that holds no CRD (a wrong path, such as config/crd for config/crd/bases)', () => {
    expect(failure(write('# empty\n')).message).toMatch(/holds no CustomResourceDefinition$/);
    const dir = write({ 'README.md': 'docs\n' });
    mkdirSync(join(dir, 'bases'));
    writeFileSync(join(dir, 'bases', 'crd.yaml'), crd('nested'));
    expect(failure(dir).message).toBe(`${dir} holds no CustomResourceDefinition in its .yaml, .yml or .json files (0 read; subdirectories are not read)`);
  });
});
