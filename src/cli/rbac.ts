// `kube-informer rbac <module>...`: the RBAC objects (Roles, ClusterRole, bindings) the Managers a module exports need, as YAML or JSON.

import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { rbacCommand } from '../operations/rbac-cli.js';
import { UsageError, type Subcommand } from './args.js';
import { loadUserModule } from './load-module.js';

/** The `name` of the nearest package.json from `cwd` up, without its scope; undefined when there is none. */
function packageName(cwd: string): string | undefined {
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const file = join(dir, 'package.json');
    if (existsSync(file)) {
      const name = (JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown }).name;
      return typeof name === 'string' ? name.replace(/^@[^/]+\//, '') : undefined;
    }
    if (dirname(dir) === dir) return undefined;
  }
}

/** `kube-informer rbac`. */
export const rbacCommandSpec: Subcommand = {
  name: 'rbac',
  summary: 'least-privilege RBAC (Roles, a ClusterRole, bindings) derived from the Managers a module exports, as YAML',
  verbs: [
    {
      name: '',
      summary: 'The RBAC objects every Manager the modules export needs (docs/rbac.md), in a stable order.',
      positionals: '<module>...',
      arity: { min: 1, max: Infinity },
      flags: {
        name: { type: 'string', value: '<name>', description: "the Roles', ClusterRole's and bindings' name (default: the name of the nearest package.json)" },
        namespace: { type: 'string', value: '<namespace>', description: "the ServiceAccount's namespace (default 'default')" },
        'service-account': { type: 'string', value: '<name>', description: 'the ServiceAccount the bindings name (default: --name)' },
        'with-service-account': { type: 'boolean', description: 'print the ServiceAccount object too' },
        export: { type: 'string', value: '<export>', description: "only the Manager of this export ('default' for the default one); default: every Manager, merged" },
        cluster: { type: 'string', value: 'management|target', description: "a MultiClusterManager's rules for its 'target' clusters (the controllers') or its 'management' cluster (the providers'); required for one, refused for a Manager" },
        output: { type: 'string', short: 'o', value: 'yaml|json', description: "'yaml' (default: documents, each rule under a comment saying why) or 'json' (a v1 List)" },
      },
      details: `Each module is a JavaScript or TypeScript file that exports a Manager (kube-informer/operations),
as its default export or a named one, without running it (build the Manager at import; run it from
another file). The rules are what Manager.permissions() says: the informers' list and watch, each
controller's .uses(...), the leader-election Lease, the Event recorder, drift audits, shard rings, the
webhook configurations and the CRDs it installs. A Role per namespace where every use is namespaced, a
ClusterRole where one is not. What the rules cannot cover (a controller that declares no .uses) is a
warning on stderr. A MultiClusterManager's RBAC is two documents, one per kind of cluster: --cluster
target (what every engaged cluster grants the credentials in its kubeconfig: the controllers' rules)
and --cluster management (what the cluster holding the kubeconfig Secrets grants: the providers').

  npx kube-informer rbac ./src/manager.ts --namespace widgets > config/rbac.yaml
  npx kube-informer rbac ./src/fleet.ts --cluster target > config/rbac-target.yaml
  npx kube-informer rbac ./dist/manager.js --name widget-operator -o json
`,
      async run({ flags, positionals }, io) {
        const output = (flags.output as string | undefined) ?? 'yaml';
        if (output !== 'yaml' && output !== 'json') throw new UsageError(`--output must be yaml or json, got ${JSON.stringify(output)}`);
        const cluster = flags.cluster as string | undefined;
        if (cluster !== undefined && cluster !== 'management' && cluster !== 'target') throw new UsageError(`--cluster must be management or target, got ${JSON.stringify(cluster)}`);
        const name = (flags.name as string | undefined) ?? packageName(io.cwd);
        if (name === undefined) throw new UsageError(`no --name given and no package.json found from ${io.cwd}`);
        const modules = [];
        for (const path of positionals) {
          modules.push({ path, exports: await loadUserModule(path, io.cwd, `kube-informer rbac ${positionals.join(' ')}`) });
        }
        const { text, warnings } = rbacCommand(modules, {
          name,
          namespace: (flags.namespace as string | undefined) ?? 'default',
          serviceAccountName: flags['service-account'] as string | undefined,
          serviceAccount: flags['with-service-account'] === true,
          exportName: flags.export as string | undefined,
          output,
          ...(cluster === undefined ? {} : { cluster }),
        });
        for (const warning of warnings) io.stderr(`warning: ${warning}\n`);
        io.stdout(text);
      },
    },
  ],
};
