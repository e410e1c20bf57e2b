// A fresh project that installs the packed tarball, as a user's would: the envtest recipes of docs/testing.md (vitest, Jest) run in one.

import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository's root. */
export const repo = resolve(fileURLToPath(new URL('../..', import.meta.url)));

/**
 * Packs the repository into a new scratch directory and makes `<scratch>/app`: `packageJson` written,
 * the tarball and `extraDependencies` installed from npm, `config/crd/bases/gadgets.yaml` (the suite's
 * Gadget CRD, where kubebuilder keeps CRDs) and an empty `test/` in place. The caller removes `scratch`.
 */
export function packedProject(prefix: string, packageJson: Record<string, unknown>, extraDependencies: readonly string[] = []): { scratch: string; project: string } {
  const scratch = mkdtempSync(join(tmpdir(), prefix));
  execFileSync('npm', ['pack', '--silent', '--pack-destination', scratch], { cwd: repo, stdio: ['ignore', 'ignore', 'inherit'] });
  const tarball = readdirSync(scratch).find((f) => f.endsWith('.tgz'))!;
  const project = join(scratch, 'app');
  mkdirSync(join(project, 'config', 'crd', 'bases'), { recursive: true });
  mkdirSync(join(project, 'test'));
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', private: true, ...packageJson }));
  execFileSync('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--legacy-peer-deps', join(scratch, tarball), ...extraDependencies], {
    cwd: project,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  copyFileSync(join(repo, 'test/apiserver/fixtures/gadgets-crd.yaml'), join(project, 'config/crd/bases/gadgets.yaml'));
  return { scratch, project };
}
