// The benchmark's compiled copy of the repository: tsc into `.cache/bench-build`, run by plain node.
//
// Why compiled: users run the published JavaScript (tsc's output, as `npm run build` makes it). tsx's
// loader compiles with esbuild's keepNames, which wraps every function it creates in a naming helper
// (`Object.defineProperty` on each closure made per call): code that makes closures per event or per
// reconcile pays for the loader, not for itself. Every Node contender — the raw baseline included —
// runs from this build, so the comparison is like for like.

import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root. */
const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** Where the build goes (gitignored). */
export const buildDir = join(root, '.cache', 'bench-build');

let built = false;
let distBuilt = false;

/** Skip the builds of this process: `--no-build` (the caller vouches that both are current). */
export function skipBuilds(): void {
  built = true;
  distBuilt = true;
}

/** Compiles the repository (src, bench, …) into {@link buildDir} once per process; `log` hears when it starts. */
export function buildBench(log: (msg: string) => void = () => {}): string {
  if (built) return buildDir;
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  log('compiling with tsc into .cache/bench-build');
  execFileSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.json'), '--outDir', buildDir, '--rootDir', root, '--noEmit', 'false', '--declaration', 'false', '--sourceMap', 'false', '--incremental', 'false'], { stdio: 'inherit' });
  built = true;
  return buildDir;
}

/**
 * Builds the package as it is published (`npm run build`: tsc -p tsconfig.build.json into `dist/`) once per
 * process, for the contenders that import `kube-informer` by its name, as a user's program does (Node
 * resolves the package's own name through its `exports` from inside the repository).
 */
export function buildDist(log: (msg: string) => void = () => {}): void {
  if (distBuilt) return;
  log('building the package into dist/ (npm run build)');
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'inherit' });
  distBuilt = true;
}

/** The compiled path of a file under bench/ (`contenders/raw.ts` → `.cache/bench-build/bench/contenders/raw.js`). */
export function compiled(benchRelative: string): string {
  return join(buildDir, 'bench', benchRelative.replace(/\.ts$/, '.js'));
}
