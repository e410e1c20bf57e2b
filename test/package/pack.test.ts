// Packs the package as npm would publish it, installs the tarball into a scratch project and imports
// every entry point, so a broken `exports` map or a file missing from `files` fails the suite; the
// guides ship too, and every relative link of a shipped page must resolve inside the package.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, mkdirSync, readFileSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const repo = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
let scratch = '';

function run(cmd: string, args: string[], cwd: string): string {
  return execFileSync(cmd, args, { cwd, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
}

describe('the published package', () => {
  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'kube-informer-pack-'));
    // `npm pack` runs the `prepack` build, so the tarball holds a fresh dist/.
    run(npm, ['pack', '--silent', '--pack-destination', scratch], repo);
    const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'));
    if (!tarball) throw new Error(`npm pack produced no tarball in ${scratch}`);
    const project = join(scratch, 'app');
    mkdirSync(project);
    writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', type: 'module', private: true }));
    // The peer dependency is linked from our own install, so the test needs no network for it.
    run(
      npm,
      ['install', '--no-audit', '--no-fund', '--prefer-offline', '--legacy-peer-deps', join(scratch, tarball)],
      project,
    );
    mkdirSync(join(project, 'node_modules/@kubernetes'), { recursive: true });
    symlinkSync(join(repo, 'node_modules/@kubernetes/client-node'), join(project, 'node_modules/@kubernetes/client-node'));
  }, 300_000);

  /** The paths in the tarball, without npm's `package/` prefix. */
  function shippedFiles(): string[] {
    return run('tar', ['-tzf', join(scratch, readdirSync(scratch).find((f) => f.endsWith('.tgz'))!)], repo)
      .trim()
      .split('\n')
      .map((f) => f.replace(/^package\//, ''));
  }

  afterAll(() => {
    if (scratch) rmSync(scratch, { recursive: true, force: true });
  });

  it('ships only dist, the README, the license, CONTRIBUTING.md and the guides with their pictures', () => {
    const files = shippedFiles();
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/testing/index.js');
    expect(files).toContain('dist/cache.js');
    expect(files).toContain('dist/workqueue/index.js');
    expect(files).toContain('dist/leaderelection/index.js');
    expect(files).toContain('dist/operations/index.js');
    expect(files).toContain('LICENSE');
    expect(files).toContain('README.md');
    expect(files).toContain('CONTRIBUTING.md');
    expect(files).toContain('docs/README.md');
    expect(files).toContain('docs/getting-started.md');
    expect(files).toContain('docs/architecture.svg');
    // The build recipe behind `npx kube-informer envtest use`: build.sh and the Go module it builds.
    expect(files).toEqual(expect.arrayContaining(['dist/envtest/index.js', 'dist/cli/bin.js', 'scripts/apiserver/build.sh', 'test/apiserver/go.mod', 'test/apiserver/go.sum', 'test/apiserver/cmd/kube-apiserver/main.go', 'test/apiserver/cmd/etcd/main.go', 'test/apiserver/cmd/kube-controller-manager/main.go']));
    const recipe = /^(scripts\/apiserver\/build\.sh|test\/apiserver\/(go\.mod|go\.sum|cmd\/[a-z-]+\/main\.go))$/;
    expect(files.filter((f) => !recipe.test(f) && !/^(dist\/|docs\/[^/]+\.(md|svg)$|templates\/init\/|README\.md$|CONTRIBUTING\.md$|LICENSE$|package\.json$)/.test(f))).toEqual([]);
  });

  it('every relative link of a shipped page resolves to a shipped file (links into examples/ and bench/ are the repository\'s)', () => {
    const files = new Set(shippedFiles());
    const dead: string[] = [];
    for (const page of [...files].filter((f) => f.endsWith('.md'))) {
      const text = readFileSync(join(scratch, 'app/node_modules/kube-informer', page), 'utf8')
        .replace(/```[\s\S]*?```/g, '')
        .replace(/`[^`\n]*`/g, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^([a-z]+:|#)/.test(target)) continue;
        const file = posix.normalize(posix.join(posix.dirname(page), target.replace(/#.*$/, '')));
        if (/^(examples|bench)\//.test(file)) continue;
        if (!files.has(file)) dead.push(`${page}: ${target}`);
      }
    }
    expect(dead).toEqual([]);
    expect(existsSync(join(scratch, 'app/node_modules/kube-informer/docs/getting-started.md'))).toBe(true);
  });

  it('imports every entry point from the installed tarball; the root names at most 61 runtime values', () => {
    const script = [
      "const root = await import('kube-informer');",
      "const cache = await import('kube-informer/cache');",
      "const workqueue = await import('kube-informer/workqueue');",
      "const leaderelection = await import('kube-informer/leaderelection');",
      "const testing = await import('kube-informer/testing');",
      "const operations = await import('kube-informer/operations');",
      "const sharding = await import('kube-informer/sharding');",
      "const objects = await import('kube-informer/objects');",
      "const crd = await import('kube-informer/crd');",
      "const webhook = await import('kube-informer/webhook');",
      "const envtest = await import('kube-informer/envtest');",
      "const controller = await import('kube-informer/controller');",
      "if (typeof controller.Controller !== 'function' || typeof controller.finalizer !== 'function' || 'Controller' in root || 'TerminalError' in root) throw new Error('controller entry incomplete (or still in the root)');",
      "if (typeof envtest.startTestEnvironment !== 'function' || typeof envtest.resolveBinaryAssets !== 'function') throw new Error('envtest entry incomplete');",
      "if (typeof root.SharedInformerFactory !== 'function' || typeof root.resources.pods !== 'object') throw new Error('root entry incomplete');",
      "if (typeof cache.Reflector !== 'function' || typeof cache.DeltaFIFO !== 'function') throw new Error('cache entry incomplete');",
      "if (typeof workqueue.RateLimitingQueue !== 'function') throw new Error('workqueue entry incomplete');",
      "if (typeof leaderelection.LeaderElector !== 'function') throw new Error('leaderelection entry incomplete');",
      "if (typeof operations.Manager !== 'function' || typeof operations.startProbeServer !== 'function') throw new Error('operations entry incomplete');",
      "if (typeof objects.isNotFound !== 'function' || typeof objects.setControllerReference !== 'function') throw new Error('objects entry incomplete');",
      "if (typeof sharding.evenShard !== 'function' || typeof sharding.shardHash !== 'function') throw new Error('sharding entry incomplete');",
      "if (typeof crd.defineCustomResource !== 'function' || typeof crd.Type.Object !== 'function' || 'defineCustomResource' in root) throw new Error('crd entry incomplete');",
      "if (typeof webhook.WebhookServer !== 'function' || 'WebhookServer' in root) throw new Error('webhook entry incomplete (or leaked into the root)');",
      "if (typeof testing.FakeClock !== 'function' || 'FakeClock' in root) throw new Error('FakeClock belongs to the test kit only');",
      "console.log(JSON.stringify({ root: Object.keys(root).length, testing: Object.keys(testing).length }));",
    ].join('\n');
    const out = run(process.execPath, ['--input-type=module', '-e', script], join(scratch, 'app'));
    const counts = JSON.parse(out.trim()) as { root: number; testing: number };
    expect(counts.root).toBeGreaterThan(10);
    expect(counts.root).toBeLessThanOrEqual(61);
    expect(counts.testing).toBeGreaterThan(0);
  });

  it('`kube-informer envtest use` runs from the installed package: `use -i -p path` prints a cached set; the old bin names are gone', () => {
    const project = join(scratch, 'app');
    const cacheBin = join(scratch, 'cache', 'bin', 'k8s-v1.37.2-etcd-v3.7.0-00000000');
    mkdirSync(cacheBin, { recursive: true });
    for (const name of ['etcd', 'kube-apiserver']) writeFileSync(join(cacheBin, name), '#!/bin/sh\n', { mode: 0o755 });
    const out = execFileSync(join(project, 'node_modules/.bin/kube-informer'), ['envtest', 'use', '1.37.2', '-i', '-p', 'path'], {
      cwd: project,
      encoding: 'utf8',
      env: { ...process.env, KUBE_INFORMER_CACHE: join(scratch, 'cache'), XDG_DATA_HOME: join(scratch, 'xdg') },
    });
    expect(out).toBe(`${cacheBin}\n`);
    expect(readdirSync(join(project, 'node_modules/.bin')).filter((f) => f.startsWith('kube-informer'))).toEqual(['kube-informer']);
  });

  it('`kube-informer crd generate` of a .ts definition: without a loader, says what to run; with the project\'s tsx, loads it; warns of two schemas without a conversion webhook', () => {
    const project = join(scratch, 'app');
    const definition = [
      "import { Type, defineCustomResource } from 'kube-informer/crd';",
      "export const backups = defineCustomResource({ group: 'example.com', names: { kind: 'Backup' }, versions: {",
      '  v1: { storage: true, spec: Type.Object({ target: Type.String() }) },',
      '  v2: { spec: Type.Object({ targets: Type.Array(Type.String()) }) },',
      '} });',
      '',
    ].join('\n');
    writeFileSync(join(project, 'backup.ts'), definition);
    const generate = (): { status: number | null; stdout: string; stderr: string } => {
      const r = spawnSync(join(project, 'node_modules/.bin/kube-informer'), ['crd', 'generate', './backup.ts'], { cwd: project, encoding: 'utf8' });
      return { status: r.status, stdout: r.stdout, stderr: r.stderr };
    };
    const nativeTypeScript = Boolean((process.features as { typescript?: unknown }).typescript);
    const without = generate();
    if (nativeTypeScript) {
      // Node >= 22.18 (the Node 22 leg) strips the types itself.
      expect(without.status, without.stderr).toBe(0);
      expect(without.stdout).toContain('name: backups.example.com');
    } else {
      expect(without.status, without.stderr).toBe(1);
      expect(without.stderr).toContain(`./backup.ts is TypeScript: Node ${process.versions.node} cannot import TypeScript by itself`);
      expect(without.stderr).toContain('npm install --save-dev tsx   and run `npx kube-informer crd generate ./backup.ts` again');
      expect(without.stderr).toContain('`npx kube-informer crd generate ./backup.js`');
    }
    // tsx installed in the project (linked from ours, no network): the same command works.
    symlinkSync(join(repo, 'node_modules/tsx'), join(project, 'node_modules/tsx'));
    try {
      const withTsx = generate();
      expect(withTsx.status, withTsx.stderr).toBe(0);
      expect(withTsx.stdout).toContain('name: backups.example.com');
      expect(withTsx.stderr).toContain('warning: CustomResourceDefinition backups.example.com serves 2 versions with different schemas (v2, v1) under conversion strategy None');
    } finally {
      rmSync(join(project, 'node_modules/tsx'));
    }
  });

  it('the package root never loads kube-informer/envtest', () => {
    const dist = join(scratch, 'app/node_modules/kube-informer/dist');
    const seen = new Set<string>();
    const visit = (file: string): void => {
      if (seen.has(file)) return;
      seen.add(file);
      for (const [, spec] of readFileSync(file, 'utf8').matchAll(/(?:from|import)\s*\(?\s*['"](\.[^'"]+)['"]/g)) visit(resolve(dirname(file), spec));
    };
    visit(join(dist, 'index.js'));
    expect(seen.size).toBeGreaterThan(20);
    expect([...seen].filter((f) => f.includes('/envtest/'))).toEqual([]);
  });

  it('type-checks a consumer of both entry points against the shipped declarations', () => {
    const project = join(scratch, 'app');
    writeFileSync(
      join(project, 'main.ts'),
      [
        "import { metaNamespaceKeyFunc, compareResourceVersion, type DeepReadonly, type KubeObject } from 'kube-informer';",
        "import { FakeClock } from 'kube-informer/testing';",
        "import { resources, type SharedIndexInformer } from 'kube-informer';",
        "import { RateLimitingQueue } from 'kube-informer/workqueue';",
        "import type { Reflector } from 'kube-informer/cache';",
        "import type { LeaderElectorOptions } from 'kube-informer/leaderelection';",
        "import type { Pod } from 'kubernetes-types/core/v1.js';",
        'const queue = new RateLimitingQueue<string>({ name: "pods" });',
        'export type Informers = [SharedIndexInformer<Pod>, Reflector<Pod>, LeaderElectorOptions, typeof resources.pods.resource];',
        'export { queue };',
        'const obj: DeepReadonly<KubeObject> = { metadata: { name: "a" } };',
        'const key: string = metaNamespaceKeyFunc(obj);',
        'const order: number = compareResourceVersion("1", "2");',
        'const clock = new FakeClock();',
        'export { key, order, clock };',
      ].join('\n'),
    );
    writeFileSync(
      join(project, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { module: 'NodeNext', moduleResolution: 'NodeNext', target: 'ES2022', strict: true, noEmit: true, skipLibCheck: true, types: [] },
        files: ['main.ts'],
      }),
    );
    expect(() => run(process.execPath, [join(repo, 'node_modules/typescript/bin/tsc'), '-p', project], project)).not.toThrow();
  });
});
