// `kube-informer crd`: `generate` writes CRD YAML from definitions, `types` writes TypeScript from CRDs (files or a cluster).

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { crdFromCluster, crdTypes, generateYaml, parseCrds, type LoadedModule } from '../crd/cli.js';
import { UsageError, type Subcommand } from './args.js';
import { loadUserModule } from './load-module.js';

/** `kube-informer crd`. */
export const crdCommand: Subcommand = {
  name: 'crd',
  summary: 'CustomResourceDefinitions: YAML from defineCustomResource definitions, TypeScript from CRDs.',
  verbs: [
    {
      name: 'generate',
      summary: 'CRD YAML for every definition each module exports, in export order',
      positionals: '<module>...',
      arity: { min: 1, max: Infinity },
      flags: {},
      details: `Each module is a JavaScript or TypeScript file exporting defineCustomResource(...) results
(kube-informer/crd). The YAML goes to stdout, one document per definition, for kubectl apply -f, a Helm
chart's crds/ or kustomize. A CRD that serves versions with different schemas without a conversion
webhook gets a warning on stderr.

TypeScript: Node 22.18 and later import it by themselves; on Node 20 the project's tsx is used
(npm install --save-dev tsx), or pass the compiled .js.

  npx kube-informer crd generate ./src/widgets.ts > config/crd/widgets.yaml
`,
      async run({ positionals }, io) {
        const modules: LoadedModule[] = [];
        for (const path of positionals) {
          modules.push({ path, exports: await loadUserModule(path, io.cwd, `kube-informer crd generate ${positionals.join(' ')}`) });
        }
        const { yaml, warnings } = generateYaml(modules);
        for (const warning of warnings) io.stderr(`warning: ${warning}\n`);
        io.stdout(yaml);
      },
    },
    {
      name: 'types',
      summary: 'TypeScript types and descriptors from CRDs: YAML files, or one CRD of a cluster (--name)',
      positionals: '[<crd.yaml>...]',
      arity: { min: 0, max: Infinity },
      flags: {
        'import-from': { type: 'string', value: '<module>', description: "where the generated file imports ResourceDescriptor from (default 'kube-informer')" },
        name: { type: 'string', value: '<crd-name>', description: 'read this CustomResourceDefinition from the cluster instead of files' },
        kubeconfig: { type: 'string', value: '<file>', description: 'the kubeconfig for --name (default: $KUBECONFIG, then ~/.kube/config, then in-cluster)' },
      },
      details: `For each version of each CRD: interfaces of the object and a typed ResourceDescriptor, on
stdout; what the CRD leaves open becomes { [key: string]: unknown }, noted on stderr.

  npx kube-informer crd types gateway.networking.k8s.io_httproutes.yaml > src/gateway/httproutes.ts
  npx kube-informer crd types --name widgets.example.com > src/widgets.ts
`,
      async run({ flags, positionals }, io) {
        const name = flags.name as string | undefined;
        const kubeconfig = flags.kubeconfig as string | undefined;
        if (name !== undefined && positionals.length > 0) throw new UsageError('give CRD files or --name, not both');
        if (name === undefined && positionals.length === 0) throw new UsageError('needs a CRD file or --name');
        if (kubeconfig !== undefined && name === undefined) throw new UsageError('--kubeconfig goes with --name');
        const crds: CustomResourceDefinition[] = [];
        let source: string;
        if (name !== undefined) {
          crds.push(await crdFromCluster(name, kubeconfig === undefined ? undefined : resolve(io.cwd, kubeconfig)));
          source = `the cluster's CustomResourceDefinition ${name}`;
        } else {
          for (const file of positionals) crds.push(...parseCrds(await readFile(resolve(io.cwd, file), 'utf8'), file));
          if (crds.length === 0) throw new Error(`${positionals.join(', ')}: no CustomResourceDefinition found`);
          source = positionals.join(', ');
        }
        const generated = crdTypes(crds, source, flags['import-from'] as string | undefined);
        for (const note of generated.notes) io.stderr(`note: ${note}\n`);
        io.stdout(generated.source);
      },
    },
  ],
};
