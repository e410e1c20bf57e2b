// `kube-informer init <name>`: the files a project gets for each choice, the bad inputs refused with nothing written, and the template engine's rules.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { runCommand } from '../../src/cli/index.js';
import { initProject } from '../../src/cli/init.js';
import { renderTemplate } from '../../src/cli/scaffold.js';

const root = mkdtempSync(join(tmpdir(), 'ki-init-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const version = (JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string }).version;

async function run(...argv: string[]) {
  let stdout = '';
  let stderr = '';
  const code = await runCommand(['init', ...argv], { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: root, env: {} });
  return { code, stdout, stderr };
}

const read = (dir: string, file: string): string => readFileSync(join(dir, file), 'utf8');
const yamlDocs = (dir: string, file: string): Array<Record<string, any>> => parseAllDocuments(read(dir, file)).map((d) => d.toJS() as Record<string, any>);

describe('kube-informer init', () => {
  it('writes a project with the definition, the controller, the Manager, tests, a Dockerfile and the kustomization, every placeholder filled', async () => {
    const r = await run('backup-operator');
    expect(r).toMatchObject({ code: 0, stderr: '' });
    const dir = join(root, 'backup-operator');
    const { files } = { files: r.stdout.split('\n').filter((l) => l.startsWith('  ') && !l.includes(' ', 2)).map((l) => l.trim()) };
    expect(files).toEqual([
      '.dockerignore',
      '.gitignore',
      'Dockerfile',
      'README.md',
      'config/crd/.gitkeep',
      'config/kustomization.yaml',
      'config/manager/deployment.yaml',
      'config/namespace.yaml',
      'config/rbac/service-account.yaml',
      'package.json',
      'src/controller.ts',
      'src/crd.ts',
      'src/main.ts',
      'src/manager.ts',
      'src/manifests.ts',
      'src/settings.ts',
      'test/envtest/backups.test.ts',
      'test/fake/backups.test.ts',
      'tsconfig.build.json',
      'tsconfig.json',
    ]);
    for (const file of files) expect(read(dir, file), file).not.toMatch(/\{\{|@if|@end|@else/);
    expect(read(dir, 'src/crd.ts')).toContain("group: 'backup-operator.example.com',\n  names: { kind: 'Backup' },");
    expect(read(dir, 'src/controller.ts')).toContain('export function backupController(');
    const pkg = JSON.parse(read(dir, 'package.json')) as { name: string; dependencies: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.name).toBe('backup-operator');
    expect(pkg.dependencies['kube-informer']).toBe(`^${version}`);
    expect(pkg.scripts.manifests).toBe(
      'npm run build && kube-informer crd generate ./dist/manifests.js > config/crd/backups.yaml && ' +
        'kube-informer rbac ./dist/manifests.js --name backup-operator --namespace backup-operator-system --service-account backup-operator > config/rbac/role.yaml',
    );
    expect(yamlDocs(dir, 'config/kustomization.yaml')[0].resources).toEqual(['namespace.yaml', 'crd/backups.yaml', 'rbac/service-account.yaml', 'rbac/role.yaml', 'manager/deployment.yaml']);
  });

  it('gives the Deployment what the restricted Pod Security Standard asks, probes, a memory limit the heap is sized from, and two replicas', async () => {
    const dir = join(root, 'pss');
    await initProject(dir, { name: 'pss' });
    const [deployment] = yamlDocs(dir, 'config/manager/deployment.yaml');
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    expect(deployment.spec.replicas).toBe(2);
    expect(pod.securityContext).toEqual({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000, seccompProfile: { type: 'RuntimeDefault' } });
    expect(container.securityContext).toEqual({ allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, runAsNonRoot: true, capabilities: { drop: ['ALL'] } });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/livez', port: 'probes' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'probes' });
    expect(container.env.find((e: { name: string }) => e.name === 'MEMORY_LIMIT_MIB').valueFrom.resourceFieldRef).toMatchObject({ resource: 'limits.memory', divisor: '1Mi' });
    expect(container.resources.limits.memory).toBe('256Mi');
    expect(pod.terminationGracePeriodSeconds).toBe(30);
    expect(read(dir, 'src/settings.ts')).toContain('export const STOP_GRACE_MS = 25_000;');
    expect(read(dir, 'Dockerfile')).toContain('npm ci --omit=dev');
    expect(read(dir, 'Dockerfile')).toContain('USER 1000:1000');
    expect(yamlDocs(dir, 'config/namespace.yaml')[0].metadata.labels['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('with webhooks and cert-manager: the Service, the Certificate and Issuer, the configurations from npm run manifests, the Secret mounted', async () => {
    const r = await run('hooks', '--webhooks', 'conversion,validating,defaulting', '--kind', 'Widget', '--group', 'widgets.acme.io');
    expect(r.code).toBe(0);
    const dir = join(root, 'hooks');
    expect(yamlDocs(dir, 'config/kustomization.yaml')[0].resources).toEqual([
      'namespace.yaml',
      'crd/widgets.yaml',
      'rbac/service-account.yaml',
      'rbac/role.yaml',
      'manager/deployment.yaml',
      'webhook/service.yaml',
      'webhook/certificate.yaml',
      'webhook/manifests.yaml',
    ]);
    expect(yamlDocs(dir, 'config/webhook/certificate.yaml').map((d) => `${d.kind} ${d.metadata.name}`)).toEqual(['Issuer hooks-selfsigned', 'Certificate hooks-serving-cert']);
    expect(yamlDocs(dir, 'config/webhook/certificate.yaml')[1].spec.dnsNames).toEqual(['hooks-webhook.hooks-system.svc', 'hooks-webhook.hooks-system.svc.cluster.local']);
    const webhooks = read(dir, 'src/webhooks.ts');
    expect(webhooks).toContain("'cert-manager.io/inject-ca-from': CERTIFICATE");
    expect(webhooks).toContain('server.register(PATHS.validate, validateWidget);');
    expect(webhooks).toContain('server.register(PATHS.default, defaultWidget);');
    expect(webhooks).toContain('server.register(PATHS.convert, convertWidget);');
    expect(read(dir, 'src/crd.ts')).toContain('v1alpha1: {');
    expect(JSON.parse(read(dir, 'package.json')).scripts.manifests).toContain('kube-informer webhook manifests ./dist/manifests.js > config/webhook/manifests.yaml');
    const pod = yamlDocs(dir, 'config/manager/deployment.yaml')[0].spec.template.spec;
    expect(pod.volumes).toContainEqual({ name: 'serving-cert', secret: { secretName: 'hooks-webhook-tls' } });
    expect(read(dir, 'README.md')).toContain('Written by `npx kube-informer init hooks` --kind Widget --group widgets.acme.io --webhooks validating,defaulting,conversion --certificates cert-manager.');
  });

  it('with self-managed certificates: one replica, no cert-manager objects, and the process installs a CRD whose conversion webhook needs its CA', async () => {
    const dir = join(root, 'self');
    const { files } = await initProject(dir, { name: 'self', webhooks: ['validating', 'conversion'], certificates: 'self-managed' });
    expect(files).not.toContain('config/webhook/certificate.yaml');
    expect(read(dir, 'src/manifests.ts')).not.toMatch(/crd\.js|crdWithConversion/);
    expect(yamlDocs(dir, 'config/manager/deployment.yaml')[0].spec.replicas).toBe(1);
    expect(yamlDocs(dir, 'config/kustomization.yaml')[0].resources.filter((r: string) => r.startsWith('crd/'))).toEqual([]);
    expect(read(dir, 'src/manager.ts')).toContain('crds: [crdWithConversion(webhooks.caBundle())],');
    expect(read(dir, 'src/webhooks.ts')).toContain('configurations: { objects: webhookConfigurations(), kubeConfig, fieldManager: NAME },');
    expect(JSON.parse(read(dir, 'package.json')).scripts.manifests).not.toContain('crd generate');
  });

  it('refuses a folder that is not empty, and leaves what is there untouched', async () => {
    const dir = join(root, 'taken');
    mkdirSync(dir);
    writeFileSync(join(dir, 'package.json'), 'mine');
    const r = await run('taken');
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`kube-informer init: ${dir} is not empty (package.json): init writes into a new or empty folder and overwrites nothing\n`);
    expect(readdirSync(dir)).toEqual(['package.json']);
    expect(read(dir, 'package.json')).toBe('mine');
  });

  it('refuses a bad name, kind, group, namespace, webhook or strategy, and an unknown flag, writing nothing (exit 2)', async () => {
    const cases: Array<[string[], string]> = [
      [['Backup'], 'the name "Backup" is not a DNS-1123 label'],
      [['backup_operator'], 'the name "backup_operator" is not a DNS-1123 label'],
      [['a'.repeat(64)], 'is 64 characters long; a DNS-1123 label has at most 63'],
      [['9lives'], '--kind (from the name: pass --kind): must be UpperCamelCase (Widget), got "9lives"'],
      [['ok', '--kind', 'widget'], '--kind: must be UpperCamelCase (Widget), got "widget"'],
      [['ok', '--group', 'example'], '--group: must be a DNS subdomain with at least one dot (example.com), got "example"'],
      [['ok', '--namespace', 'Ops'], '--namespace "Ops" is not a DNS-1123 label'],
      [['ok', '--webhooks', 'validating,mutating'], '--webhooks: unknown webhook "mutating" (known: validating, defaulting, conversion)'],
      [['ok', '--certificates', 'vault', '--webhooks', 'validating'], '--certificates: unknown strategy "vault" (known: cert-manager, self-managed)'],
      [['ok', '--certificates', 'cert-manager'], '--certificates goes with --webhooks'],
      [['ok', '--webhook', 'validating'], 'unknown flag --webhook (did you mean --webhooks?)'],
      [[], 'needs <name> (got nothing)'],
      [['one', 'two'], 'unexpected argument "two"'],
    ];
    for (const [argv, message] of cases) {
      const r = await run(...argv);
      expect({ argv, code: r.code }).toEqual({ argv, code: 2 });
      expect(r.stderr).toContain(message);
      expect(r.stderr).toContain('Usage: kube-informer init <name> [--dir <path>]');
      expect(r.stdout).toBe('');
    }
    for (const name of ['Backup', 'backup_operator', '9lives', 'ok', 'one']) expect(existsSync(join(root, name))).toBe(false);
  });

  it('writes into --dir, and prints its help (0)', async () => {
    expect((await run('elsewhere', '--dir', 'nested/here')).code).toBe(0);
    expect(existsSync(join(root, 'nested/here/src/crd.ts'))).toBe(true);
    const help = await run('--help');
    expect(help).toMatchObject({ code: 0, stderr: '' });
    expect(help.stdout).toContain('Usage: kube-informer init <name> [--dir <path>] [--group <api group>] [--kind <Kind>] [--namespace <ns>] [--webhooks <list>] [--certificates <strategy>]');
    expect((await run('help')).stdout).toBe(help.stdout);
    let top = '';
    await runCommand(['--help'], { stdout: (t) => (top += t), stderr: () => undefined, cwd: root, env: {} });
    expect(top).toContain('init      a new operator project');
  });
});

describe('the template engine', () => {
  const values = { text: { name: 'x' }, flags: { a: true, b: false } };

  it('keeps the lines of the blocks whose condition holds, nested, with @else and negation, and fills placeholders', () => {
    const source = ['1 {{name}}', '// @if a', '2', '# @if b', '3', '# @else', '4', '# @end', '<!-- @if !b -->', '5', '<!-- @end -->', '// @end', '// @if b', '6', '// @end'].join('\n');
    expect(renderTemplate(source, values, 't')).toBe(['1 x', '2', '4', '5'].join('\n'));
  });

  it('throws naming the template and the line for an unknown flag or placeholder, or an unbalanced block', () => {
    expect(() => renderTemplate('// @if c\n// @end', values, 't')).toThrow('t:1: unknown flag "c" (known: a, b)');
    expect(() => renderTemplate('ok\n{{nope}}', values, 't')).toThrow('t:2: unknown placeholder {{nope}}');
    expect(() => renderTemplate('// @if a', values, 't')).toThrow('t:1: @if without @end');
    expect(() => renderTemplate('// @end', values, 't')).toThrow('t:1: @end without @if');
    expect(() => renderTemplate('// @if a\n// @else\n// @else\n// @end', values, 't')).toThrow('t:3: a second @else for the @if of line 1');
  });
});
