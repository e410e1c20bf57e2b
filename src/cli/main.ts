// The `kube-informer` command: one dispatcher for `crd`, `webhook`, `rbac`, `envtest` and `init`, each loaded only when asked for.

import { closestOption } from '../core/options.js';
import { EXIT, EXIT_CODES, packageVersion, runSubcommand, type CommandIo, type Subcommand } from './args.js';

/**
 * The subcommands: a summary for the help, and the module that holds each, imported only when it runs
 * (`kube-informer envtest` loads neither TypeBox nor the webhook server).
 */
const SUBCOMMANDS: Readonly<Record<string, { summary: string; load: () => Promise<Subcommand> }>> = {
  crd: { summary: 'CRD YAML from defineCustomResource definitions; TypeScript from CRDs', load: async () => (await import('./crd.js')).crdCommand },
  webhook: { summary: 'the webhook configurations a module exports, as YAML', load: async () => (await import('./webhook.js')).webhookCommand },
  rbac: { summary: 'least-privilege RBAC derived from the Managers a module exports, as YAML', load: async () => (await import('./rbac.js')).rbacCommandSpec },
  envtest: { summary: 'find or build the etcd and kube-apiserver of kube-informer/envtest', load: async () => (await import('./envtest.js')).envtestCommand() },
  init: { summary: 'a new operator project: code, tests, Dockerfile, kustomize manifests', load: async () => (await import('./init.js')).initCommand },
};

const HELP = `Usage: kube-informer <command> [flags]

Commands:
${Object.entries(SUBCOMMANDS)
  .map(([name, s]) => `  ${name.padEnd(8)}  ${s.summary}`)
  .join('\n')}

  kube-informer crd generate <module>...
  kube-informer crd types <crd.yaml>... | --name <crd-name> [--kubeconfig <file>] [--import-from <module>]
  kube-informer webhook manifests <module>... [--ca-file <ca.pem>]
  kube-informer rbac <module>... [--name <name>] [--namespace <ns>] [--service-account <sa>] [-o yaml|json]
  kube-informer envtest use [version] [-p overview|path|env] [-i]
  kube-informer init <name> [--dir <path>] [--group <api group>] [--kind <Kind>] [--namespace <ns>]
                     [--webhooks validating,defaulting,conversion] [--certificates cert-manager|self-managed]

Run \`kube-informer <command> --help\` (or \`kube-informer help <command>\`) for a command's flags.
--version prints the package's version.

${EXIT_CODES}`;

/**
 * Runs `kube-informer <command> ...` with `argv` (the words after the program) and resolves with the
 * exit code: 0 done, 1 failed (the reason on stderr), 2 a usage error (the usage on stderr).
 */
export async function runCommand(argv: readonly string[], io: CommandIo): Promise<number> {
  const [word, ...rest] = argv;
  if (word === '--help' || word === '-h' || (word === 'help' && rest.length === 0)) {
    io.stdout(HELP);
    return EXIT.ok;
  }
  if (word === '--version') {
    io.stdout(`${packageVersion()}\n`);
    return EXIT.ok;
  }
  if (word === undefined) {
    io.stderr(`kube-informer: no command given\n\n${HELP}`);
    return EXIT.usage;
  }
  const helpOf = word === 'help';
  const name = helpOf ? rest[0] : word;
  const entry = Object.hasOwn(SUBCOMMANDS, name) ? SUBCOMMANDS[name] : undefined;
  if (entry === undefined) {
    const close = closestOption(name, Object.keys(SUBCOMMANDS));
    const what = name.startsWith('-') ? `unknown flag ${name}` : `unknown command ${JSON.stringify(name)}`;
    io.stderr(`kube-informer: ${what}${close === undefined ? '' : ` (did you mean ${close}?)`}\n\n${HELP}`);
    return EXIT.usage;
  }
  const sub = await entry.load();
  return runSubcommand(sub, helpOf ? ['help', ...rest.slice(1)] : rest, io);
}
