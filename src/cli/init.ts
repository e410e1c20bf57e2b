// `kube-informer init <name>`: a new operator project that builds, tests and deploys as it is — code, tests, Dockerfile, kustomize manifests, README — from the templates of templates/init/.

import { readdir } from 'node:fs/promises';
import { resolve } from 'node:path';
import { DNS_LABEL } from '../core/label-selector.js';
import { validateOptions } from '../core/options.js';
import { checkNames } from '../crd/cli.js';
import { packageVersion, UsageError, type Subcommand } from './args.js';
import { renderTemplates, TEMPLATES_DIR, writeFiles, type TemplateValues } from './scaffold.js';

/** A webhook `init` can generate. */
export type InitWebhook = 'validating' | 'defaulting' | 'conversion';

/** Where the webhook server's certificate comes from. */
export type InitCertificates = 'cert-manager' | 'self-managed';

/** Options of {@link initProject}. */
export interface InitOptions {
  /** The project's name, a DNS-1123 label: the npm package, Deployment, ServiceAccount, Lease and field manager. Required. */
  name: string;
  /** The custom resource's API group, a DNS subdomain with a dot. Default: `<name>.example.com`. */
  group?: string;
  /** The custom resource's kind, UpperCamelCase. Default: the name without `-operator`/`-controller`, in UpperCamelCase (`backup-operator` → `Backup`). */
  kind?: string;
  /** The namespace the manifests deploy to, a DNS-1123 label. Default: `<name>-system`. */
  namespace?: string;
  /** The webhooks to generate. Default: none. */
  webhooks?: readonly InitWebhook[];
  /** The certificate strategy of the webhooks (only with `webhooks`). Default: `'cert-manager'`. */
  certificates?: InitCertificates;
}

/** What {@link initProject} wrote. */
export interface InitResult {
  /** The project folder, absolute. */
  dir: string;
  /** The files written, relative to `dir` (`/`-separated), sorted. */
  files: string[];
  /** The options with their defaults filled in. */
  options: Required<InitOptions>;
}

const WEBHOOKS: readonly InitWebhook[] = ['validating', 'defaulting', 'conversion'];
const CERTIFICATES: readonly InitCertificates[] = ['cert-manager', 'self-managed'];

/** Why `value` is not a DNS-1123 label (the names of a Namespace, a Service, a Deployment's pods), or undefined. */
function labelProblem(value: string): string | undefined {
  if (value.length > 63) return `is ${value.length} characters long; a DNS-1123 label has at most 63`;
  if (!DNS_LABEL.test(value)) return 'is not a DNS-1123 label: lowercase letters, digits and "-", starting and ending with a letter or digit';
  return undefined;
}

/** The kind a name suggests: `backup-operator` → `Backup`, `cron-job-controller` → `CronJob`. */
function kindOf(name: string): string {
  const stem = name.replace(/-(operator|controller)$/, '') || name;
  return stem
    .split('-')
    .map((part) => part.charAt(0).toUpperCase() + part.slice(1))
    .join('');
}

/** The options checked and completed; a {@link UsageError} names the flag and the rule it breaks. */
export function resolveInitOptions(options: InitOptions): Required<InitOptions> {
  validateOptions('initProject', options, {
    name: 'string',
    group: 'string',
    kind: 'string',
    namespace: 'string',
    webhooks: 'any', // checked below
    certificates: [...CERTIFICATES],
  });
  const { name } = options;
  const nameProblem = typeof name === 'string' ? labelProblem(name) : 'is missing';
  if (nameProblem !== undefined) throw new UsageError(`the name ${JSON.stringify(name)} ${nameProblem}`);
  const namespace = options.namespace ?? `${name}-system`;
  const namespaceProblem = labelProblem(namespace);
  if (namespaceProblem !== undefined) throw new UsageError(`--namespace ${JSON.stringify(namespace)}${options.namespace === undefined ? ' (from the name)' : ''} ${namespaceProblem}`);
  const webhooks = [...(options.webhooks ?? [])];
  for (const w of webhooks) {
    if (!WEBHOOKS.includes(w)) throw new UsageError(`--webhooks: unknown webhook ${JSON.stringify(w)} (known: ${WEBHOOKS.join(', ')})`);
  }
  if (options.certificates !== undefined && webhooks.length === 0) throw new UsageError('--certificates goes with --webhooks (without webhooks there is no certificate)');
  if (webhooks.length > 0 && !/^[a-z]/.test(name)) throw new UsageError(`the name ${JSON.stringify(name)} must start with a letter with --webhooks: the Service ${name}-webhook is named after it (a DNS-1035 label)`);
  if (webhooks.length > 0 && `${name}-webhook`.length > 63) throw new UsageError(`the name ${JSON.stringify(name)} is too long with --webhooks: the Service ${name}-webhook would pass 63 characters`);
  const kind = options.kind ?? kindOf(name);
  const group = options.group ?? `${name}.example.com`;
  try {
    checkNames({ group, names: { kind } });
  } catch (err) {
    const message = (err as Error).message.replace(/^defineCustomResource: (group|names\.kind): /, '');
    const flag = /^defineCustomResource: group:/.test((err as Error).message) ? '--group' : '--kind';
    const derived = flag === '--kind' ? options.kind === undefined : options.group === undefined;
    throw new UsageError(`${flag}${derived ? ` (from the name: pass ${flag})` : ''}: ${message}`);
  }
  return { name, group, kind, namespace, webhooks: WEBHOOKS.filter((w) => webhooks.includes(w)), certificates: options.certificates ?? 'cert-manager' };
}

/** The values the templates are rendered with. */
function templateValues(o: Required<InitOptions>): TemplateValues {
  const { plural, singular } = checkNames({ group: o.group, names: { kind: o.kind } });
  const has = (w: InitWebhook): boolean => o.webhooks.includes(w);
  const webhooks = o.webhooks.length > 0;
  const certManager = webhooks && o.certificates === 'cert-manager';
  const selfManaged = webhooks && o.certificates === 'self-managed';
  const admission = has('validating') || has('defaulting');
  const flags = {
    webhooks,
    validating: has('validating'),
    defaulting: has('defaulting'),
    conversion: has('conversion'),
    admission,
    certManager,
    selfManaged,
    // The CRD is a file of config/ unless the process installs it (a conversion webhook with a CA only the process knows).
    crdFile: !(has('conversion') && selfManaged),
    crdByProcess: has('conversion') && selfManaged,
    crdPlain: !has('conversion'),
    crdConversionFile: has('conversion') && certManager,
    admissionManifests: admission && certManager,
  };
  const manifests = [
    'npm run build',
    ...(flags.crdFile ? [`kube-informer crd generate ./dist/manifests.js > config/crd/${plural}.yaml`] : []),
    ...(flags.admissionManifests ? ['kube-informer webhook manifests ./dist/manifests.js > config/webhook/manifests.yaml'] : []),
    `kube-informer rbac ./dist/manifests.js --name ${o.name} --namespace ${o.namespace} --service-account ${o.name} > config/rbac/role.yaml`,
  ];
  const initFlags = [
    ...(o.kind !== kindOf(o.name) ? [`--kind ${o.kind}`] : []),
    ...(o.group !== `${o.name}.example.com` ? [`--group ${o.group}`] : []),
    ...(o.namespace !== `${o.name}-system` ? [`--namespace ${o.namespace}`] : []),
    ...(webhooks ? [`--webhooks ${o.webhooks.join(',')}`, `--certificates ${o.certificates}`] : []),
  ];
  const text = {
    name: o.name,
    Kind: o.kind,
    kindVar: o.kind.charAt(0).toLowerCase() + o.kind.slice(1),
    singular,
    plural,
    group: o.group,
    namespace: o.namespace,
    version: packageVersion(),
    replicas: selfManaged ? '1' : '2',
    manifestsScript: manifests.join(' && '),
    webhookList: o.webhooks.join(', '),
    initFlags: initFlags.length === 0 ? '' : ` ${initFlags.join(' ')}`,
    conversionNote: flags.conversion ? ' and the CRD (its conversion webhook)' : '',
    manifestsCrdNote: flags.crdFile ? ', the CustomResourceDefinition (config/crd/)' : '',
    manifestsWebhookNote: flags.admissionManifests ? ', the webhook configurations (config/webhook/)' : '',
  };
  return { text, flags };
}

/** Which templates a project gets, by the path they are stored at. */
function included(path: string, flags: Readonly<Record<string, boolean>>): boolean {
  if (path === 'src/webhooks.ts' || path === 'test/fake/webhooks.test.ts' || path === 'config/webhook/service.yaml') return flags.webhooks;
  if (path === 'config/webhook/certificate.yaml') return flags.certManager;
  if (path === 'config/crd/gitkeep') return flags.crdFile; // the folder npm run manifests writes the CRD into
  return true;
}

/**
 * Writes a new operator project into `dir` (created if missing): a definition, a controller, a
 * Manager and its main, optional webhooks, tests on the fake API server and on envtest, a Dockerfile,
 * kustomize manifests under `config/` and a README. Every file is rendered before the first is
 * written, and none is overwritten: `dir` must be empty or absent. The generated CRD and RBAC files
 * are written by the project's `npm run manifests` (from its built code), not here.
 *
 * Throws a `UsageError` (code `INVALID_OPTION`) naming the option for a bad name, kind, group,
 * namespace, webhook or certificate strategy, and an `Error` naming the folder when it is not empty.
 */
export async function initProject(dir: string, options: InitOptions): Promise<InitResult> {
  const resolved = resolveInitOptions(options);
  const values = templateValues(resolved);
  const files = await renderTemplates(TEMPLATES_DIR, values, (path) => included(path, values.flags));
  const existing = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw new Error(`cannot write the project into ${dir}: ${err.message}`, { cause: err });
  });
  if (existing.length > 0) {
    throw new Error(`${dir} is not empty (${existing.slice(0, 3).join(', ')}${existing.length > 3 ? ', …' : ''}): init writes into a new or empty folder and overwrites nothing`);
  }
  await writeFiles(dir, files);
  return { dir, files: files.map((f) => f.path).sort(), options: resolved };
}

/** `kube-informer init`: one verb, the command itself. */
export const initCommand: Subcommand = {
  name: 'init',
  summary: 'A new operator project: definition, controller, Manager, tests, Dockerfile, kustomize manifests.',
  verbs: [
    {
      name: '',
      summary: 'writes a new operator project into ./<name> (or --dir)',
      positionals: '<name>',
      arity: { min: 1, max: 1 },
      flags: {
        dir: { type: 'string', value: '<path>', description: 'the folder to write into, new or empty (default ./<name>)' },
        group: { type: 'string', value: '<api group>', description: "the custom resource's API group (default <name>.example.com)" },
        kind: { type: 'string', value: '<Kind>', description: 'its kind, UpperCamelCase (default from the name: backup-operator → Backup)' },
        namespace: { type: 'string', value: '<ns>', description: 'the namespace the manifests deploy to (default <name>-system)' },
        webhooks: { type: 'string', value: '<list>', description: 'webhooks to generate, comma-separated: validating, defaulting, conversion (default none)' },
        certificates: { type: 'string', value: '<strategy>', description: 'the webhooks\' certificate: cert-manager (default) or self-managed' },
      },
      details: `<name> is a DNS-1123 label: the npm package, the Deployment, the ServiceAccount, the Lease.
The folder must be new or empty: nothing is overwritten. Then:

  cd <name> && npm install && npm test
  npm run manifests        # the CRD and the least-privilege RBAC, from the built code
  docker build -t <name>:0.1.0 . && kubectl apply -k config/

  npx kube-informer init backup-operator
  npx kube-informer init backup-operator --group backup.example.com --kind Backup --webhooks validating,conversion
  npx kube-informer init backup-operator --webhooks validating --certificates self-managed
`,
      async run({ flags, positionals }, io) {
        const [name] = positionals;
        const list = flags.webhooks as string | undefined;
        const certificates = flags.certificates as string | undefined;
        if (certificates !== undefined && !CERTIFICATES.includes(certificates as InitCertificates)) {
          throw new UsageError(`--certificates: unknown strategy ${JSON.stringify(certificates)} (known: ${CERTIFICATES.join(', ')})`);
        }
        const dir = resolve(io.cwd, (flags.dir as string | undefined) ?? name);
        const result = await initProject(dir, {
          name,
          group: flags.group as string | undefined,
          kind: flags.kind as string | undefined,
          namespace: flags.namespace as string | undefined,
          webhooks: list === undefined ? undefined : (list.split(',').map((w) => w.trim()).filter((w) => w !== '') as InitWebhook[]),
          certificates: certificates as InitCertificates | undefined,
        });
        io.stdout(`${result.files.map((f) => `  ${f}`).join('\n')}\n\nWrote ${result.files.length} files into ${dir}. Next:\n\n  cd ${dir}\n  npm install && npm test\n  npm run manifests\n`);
      },
    },
  ],
};
