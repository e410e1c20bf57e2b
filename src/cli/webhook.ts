// `kube-informer webhook`: `manifests` prints, as YAML, the webhook configurations modules export.

import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { webhookManifests } from '../webhook/cli.js';
import type { Subcommand } from './args.js';
import { loadUserModule } from './load-module.js';

/** `kube-informer webhook`. */
export const webhookCommand: Subcommand = {
  name: 'webhook',
  summary: 'Webhook registration: the ValidatingWebhookConfiguration and MutatingWebhookConfiguration objects a module exports, as YAML.',
  verbs: [
    {
      name: 'manifests',
      summary: 'YAML of every webhook configuration each module exports, in export order',
      positionals: '<module>...',
      arity: { min: 1, max: Infinity },
      flags: {
        'ca-file': { type: 'string', value: '<ca.pem>', description: "sets the caBundle of every webhook that has none (omit it when cert-manager's CA injector fills it in)" },
      },
      details: `Each module is a JavaScript or TypeScript file exporting validatingWebhookConfiguration(...) and
mutatingWebhookConfiguration(...) results (kube-informer/webhook), one by one or in a list.

  npx kube-informer webhook manifests ./dist/webhooks.js > config/webhooks.yaml
  npx kube-informer webhook manifests ./dist/webhooks.js --ca-file ca.crt
`,
      async run({ flags, positionals }, io) {
        const caFile = flags['ca-file'] as string | undefined;
        const caBundle = caFile === undefined ? undefined : (await readFile(resolve(io.cwd, caFile))).toString('base64');
        const modules = [];
        for (const path of positionals) {
          modules.push({ path, exports: await loadUserModule(path, io.cwd, `kube-informer webhook manifests ${positionals.join(' ')}`) });
        }
        io.stdout(webhookManifests(modules, caBundle));
      },
    },
  ],
};
