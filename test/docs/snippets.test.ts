// Every TypeScript snippet of README.md and docs/*.md compiles under `strict` against the package's
// entry points (issue 47: docs a user can paste). One program for all of them (test/docs/compile.ts);
// the directives that mark a snippet are described in test/docs/snippets.ts.

import { readdirSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { compileSnippets, entryPointPaths, formatErrors, repoRoot } from './compile.js';
import { extractSnippets, snippetsOf, type Snippet } from './snippets.js';

const pages = ['README.md', ...readdirSync(`${repoRoot}/docs`).filter((f) => f.endsWith('.md')).sort().map((f) => `docs/${f}`)];

describe('the TypeScript snippets of the README and the guides', () => {
  it('compile under strict, each as a module importing the package by name', () => {
    const snippets = snippetsOf(repoRoot, pages);
    // Two of our own, which must fail: proof that a wrong snippet is caught, and where it is told.
    const wrong: Snippet[] = [
      { file: 'self-check.md', line: 10, code: "import { resources } from 'kube-informer';\nconst n: number = resources.pods.resource;" },
      { file: 'self-check.md', line: 20, code: "import { FakeClock } from 'kube-informer/testing';\nnew FakeClock().advance('1s');" },
    ];
    const result = compileSnippets([...snippets, ...wrong]);
    const own = result.errors.filter((e) => e.file === 'self-check.md');
    expect(own.map((e) => `${e.file}:${e.line}: ${e.message.slice(0, 6)}`)).toEqual(['self-check.md:11: TS2322', 'self-check.md:21: TS2345']);
    const errors = result.errors.filter((e) => e.file !== 'self-check.md');
    const skips = result.skipped.map((s) => `${s.file}:${s.line} (${s.skip})`);
    console.info(`doc snippets: ${result.compiled - wrong.length} compiled, ${skips.length} skipped${skips.length > 0 ? `: ${skips.join('; ')}` : ''}`);
    expect(errors.length === 0 ? '' : `\n${formatErrors(errors)}\n`).toBe('');
  }, 120_000);

  it('reads the directives before a fence: skip with its reason, name, after, given', () => {
    const md = [
      '<!-- snippet: skip — needs a cluster -->',
      '```ts',
      'a;',
      '```',
      '<!-- snippet: name setup -->',
      '```typescript',
      'const b = 1;',
      '```',
      '<!-- snippet: after setup, given',
      'declare const c: number;',
      '-->',
      '  ```ts',
      '  b + c;',
      '  ```',
      '```sh',
      'npm test',
      '```',
    ].join('\n');
    expect(extractSnippets('x.md', md)).toEqual([
      { file: 'x.md', line: 3, code: 'a;', skip: 'needs a cluster' },
      { file: 'x.md', line: 7, code: 'const b = 1;', name: 'setup' },
      { file: 'x.md', line: 13, code: 'b + c;', after: 'setup', given: 'declare const c: number;' },
    ]);
  });

  it('refuses a directive it does not know, and a skip without its reason, naming the file and line', () => {
    expect(() => extractSnippets('x.md', 'text\n<!-- snippet: skipp -->\n```ts\na;\n```')).toThrow(/^x\.md:2: unknown snippet directive "skipp"/);
    expect(() => extractSnippets('x.md', '<!-- snippet: skip -->\n```ts\na;\n```')).toThrow(/^x\.md:1: unknown snippet directive "skip"/);
  });

  it('maps every entry point of package.json to its source', () => {
    expect(entryPointPaths()).toMatchObject({ 'kube-informer': ['./src/index.ts'], 'kube-informer/testing': ['./src/testing/index.ts'], 'kube-informer/objects': ['./src/objects.ts'] });
  });
});
