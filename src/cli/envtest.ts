// `kube-informer envtest`: `use` finds or builds etcd + kube-apiserver for envtest and prints where, as setup-envtest does.

import { envtestUse, PINNED_KUBERNETES_VERSION, useVersion, type EnvtestUseIo } from '../envtest/command.js';
import { UsageError, type CommandIo, type Subcommand } from './args.js';

const PRINT = ['overview', 'path', 'env'] as const;

/** `kube-informer envtest`; `build` replaces the build recipe (tests). */
export function envtestCommand(build?: EnvtestUseIo['build']): Subcommand {
  return {
    name: 'envtest',
    summary: 'The etcd and kube-apiserver binaries of kube-informer/envtest: find them, or build them once.',
    verbs: [
      {
        name: 'use',
        summary: 'print where a cached etcd + kube-apiserver set is, building the pinned release when none is',
        positionals: '[version]',
        arity: { min: 0, max: 1 },
        flags: {
          print: { type: 'string', short: 'p', value: '<overview|path|env>', description: 'what to print: overview (default), path (the directory), env (an export line)' },
          'installed-only': { type: 'boolean', short: 'i', description: 'never build: fail when nothing is cached' },
        },
        details: `version is the release, e.g. ${PINNED_KUBERNETES_VERSION} (the one this package can build) or 1.37; default ${PINNED_KUBERNETES_VERSION}.
The sets are looked for in kube-informer's cache (\${KUBE_INFORMER_CACHE:-~/.cache/kube-informer}/bin) and
setup-envtest's store; when there is none, the pinned release is built from the Go module proxy (Go >= 1.25,
bash and flock on PATH; minutes, once per machine).

  export KUBEBUILDER_ASSETS=$(npx kube-informer envtest use ${PINNED_KUBERNETES_VERSION} -p path)
`,
        async run({ flags, positionals }, io: CommandIo) {
          const print = (flags.print as string | undefined) ?? 'overview';
          if (!(PRINT as readonly string[]).includes(print)) throw new UsageError(`--print must be overview, path or env, got ${JSON.stringify(print)}`);
          let version: string | undefined;
          if (positionals[0] !== undefined) {
            version = useVersion(positionals[0]);
            if (version === undefined) throw new UsageError(`${JSON.stringify(positionals[0])} is not a Kubernetes release (e.g. ${PINNED_KUBERNETES_VERSION} or 1.37)`);
          }
          await envtestUse({ version, print: print as (typeof PRINT)[number], installedOnly: flags['installed-only'] === true }, { env: io.env, stdout: io.stdout, stderr: io.stderr, build });
        },
      },
    ],
  };
}
