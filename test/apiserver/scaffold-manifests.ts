// The manifests of a project `kube-informer init` writes, as its `npm run manifests` would complete them, without npm install: the project's kube-informer is this checkout's src/.

import { execFile } from 'node:child_process';
import { mkdir, readFile, symlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { parseAllDocuments, parse } from 'yaml';
import { initProject, type InitOptions } from '../../src/cli/init.js';
import type { KubeObject } from '../../src/core/index.js';
import { ROOT } from '../examples/helpers.js';

const run = promisify(execFile);

/**
 * Gives the project at `dir` a node_modules where `kube-informer` is this checkout's src/ (its package
 * exports mapped from dist/*.js to src/*.ts) and its other dependencies and tsx are this checkout's.
 */
async function linkPackages(dir: string): Promise<void> {
  const modules = join(dir, 'node_modules');
  const own = join(modules, 'kube-informer');
  await mkdir(own, { recursive: true });
  await symlink(join(ROOT, 'src'), join(own, 'src'));
  const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as { exports: Record<string, { default?: string } | string> };
  const exports = Object.fromEntries(
    Object.entries(manifest.exports)
      .filter(([, target]) => typeof target === 'object' && target.default !== undefined)
      .map(([path, target]) => [path, (target as { default: string }).default.replace(/^\.\/dist\//, './src/').replace(/\.js$/, '.ts')]),
  );
  await writeFile(join(own, 'package.json'), JSON.stringify({ name: 'kube-informer', type: 'module', exports }));
  for (const dep of ['@kubernetes', 'prom-client', 'tsx', 'kubernetes-types']) await symlink(join(ROOT, 'node_modules', dep), join(modules, dep));
}

/** A generated project's manifests: every object its kustomization lists, in order, and the files they came from. */
export interface ScaffoldManifests {
  /** The objects, each document of each resource file of config/kustomization.yaml. */
  objects: KubeObject[];
  /** The resource files, relative to config/. */
  files: string[];
}

/**
 * Runs `initProject` into `dir`, then the `kube-informer` commands of its `npm run manifests` on its
 * src/manifests.ts (this checkout's CLI, through tsx, from the project folder) instead of a build, and
 * reads what its kustomization lists.
 */
export async function scaffoldManifests(dir: string, options: InitOptions): Promise<ScaffoldManifests> {
  await initProject(dir, options);
  await linkPackages(dir);
  const scripts = (JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as { scripts: { manifests: string } }).scripts.manifests;
  for (const step of scripts.split(' && ')) {
    if (step === 'npm run build') continue;
    const [command, target] = step.split(' > ') as [string, string];
    const args = command.replace(/^kube-informer /, '').replace('./dist/manifests.js', './src/manifests.ts').split(' ');
    const { stdout } = await run(process.execPath, ['--import', 'tsx', join(ROOT, 'src/cli/bin.ts'), ...args], { cwd: dir, maxBuffer: 16 << 20 });
    await mkdir(join(dir, target, '..'), { recursive: true });
    await writeFile(join(dir, target), stdout);
  }
  const kustomization = parse(await readFile(join(dir, 'config/kustomization.yaml'), 'utf8')) as { resources: string[] };
  const objects: KubeObject[] = [];
  for (const file of kustomization.resources) {
    for (const doc of parseAllDocuments(await readFile(join(dir, 'config', file), 'utf8'))) {
      const obj = doc.toJSON() as KubeObject | null;
      if (obj !== null) objects.push(obj);
    }
  }
  return { objects, files: kustomization.resources };
}
