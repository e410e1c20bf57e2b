// Without @opentelemetry/api: a child process in which the package cannot be resolved (an ESM resolve
// hook and the CommonJS resolver both refuse it) loads every entry point, reconciles on the fake API
// server, and gets a clear INVALID_OPTION only when it asks for tracing.

import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe('the package without @opentelemetry/api', () => {
  it('loads every entry point and reconciles; asking for tracing is INVALID_OPTION naming the package; nothing tried to load it before', () => {
    const dir = mkdtempSync(join(tmpdir(), 'kube-informer-no-otel-'));
    dirs.push(dir);
    const hooks = join(dir, 'hooks.mjs');
    writeFileSync(
      hooks,
      [
        'export async function resolve(specifier, context, next) {',
        "  if (specifier.startsWith('@opentelemetry/')) { process.stdout.write(`IMPORT ${specifier}\\n`); const e = new Error(`Cannot find package '${specifier}'`); e.code = 'ERR_MODULE_NOT_FOUND'; throw e; }",
        '  return next(specifier, context);',
        '}',
      ].join('\n'),
    );
    const preload = join(dir, 'preload.mjs');
    writeFileSync(
      preload,
      [
        "import Module, { register } from 'node:module';",
        `register(${JSON.stringify(pathToFileURL(hooks).href)});`,
        'const original = Module._resolveFilename;',
        'Module._resolveFilename = function (request, ...rest) {',
        "  if (typeof request === 'string' && request.startsWith('@opentelemetry/')) { process.stdout.write(`REQUIRE ${request}\\n`); const e = new Error(`Cannot find module '${request}'`); e.code = 'MODULE_NOT_FOUND'; throw e; }",
        '  return original.call(this, request, ...rest);',
        '};',
      ].join('\n'),
    );
    const src = (file: string): string => JSON.stringify(pathToFileURL(join(root, file)).href);
    const script = [
      `const rootModule = await import(${src('src/index.ts')});`,
      `const { Controller, Action } = await import(${src('src/controller.ts')});`,
      `await import(${src('src/operations/index.ts')});`,
      `await import(${src('src/webhook/index.ts')});`,
      `const { startFakeApiServer } = await import(${src('src/testing/index.ts')});`,
      "const widgets = { group: 'example.com', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };",
      'const server = await startFakeApiServer({ resources: [widgets], logger: false });',
      'const factory = new rootModule.SharedInformerFactory(server.kubeConfig, { logger: false });',
      'const stop = new AbortController();',
      'factory.start(stop.signal);',
      'let reconciled;',
      'const done = new Promise((r) => (reconciled = r));',
      'const controller = Controller.for(factory, widgets).build(async (key) => { reconciled(key); return Action.done(); }, { logger: false });',
      'const running = controller.run(stop.signal);',
      "server.create(widgets, { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w', namespace: 'ns' } });",
      'process.stdout.write(`reconciled ${await done}\\n`);',
      'stop.abort();',
      'await running;',
      'await server.close();',
      'try {',
      '  Controller.for(factory, widgets).build(async () => Action.done(), { logger: false, tracerProvider: { getTracer: () => ({ startSpan() {} }) } });',
      "  process.stdout.write('built\\n');",
      '} catch (err) {',
      '  process.stdout.write(`${err.code}: ${err.message}\\n`);',
      '}',
    ].join('\n');
    const run = spawnSync(process.execPath, ['--import', 'tsx', '--import', pathToFileURL(preload).href, '--input-type=module', '-e', script], { cwd: root, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    const lines = run.stdout.split('\n').filter((l) => l !== '');
    expect(lines[0]).toBe('reconciled ns/w');
    // The only attempt to load the package is the one the tracerProvider asked for, and it fails clearly.
    expect(lines[1]).toBe('REQUIRE @opentelemetry/api');
    expect(lines[2]).toMatch(/^INVALID_OPTION: Controller example\.com\/v1\/widgets: option tracerProvider needs the package @opentelemetry\/api \(an optional peer dependency\): install it/);
    expect(lines).toHaveLength(3);
  }, 30_000);
});

describe("kube-informer's types without @opentelemetry/api", () => {
  it('no file under src/ imports the package (types included): our types are structural, the one load is the lazy require', async () => {
    const { readdirSync, readFileSync } = await import('node:fs');
    const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.ts'));
    const importing = files.filter((f) => /(from|import)\s*\(?\s*'@opentelemetry\//.test(readFileSync(join(root, 'src', f), 'utf8')));
    expect(importing).toEqual([]);
    const requiring = files.filter((f) => readFileSync(join(root, 'src', f), 'utf8').includes("'@opentelemetry/api'"));
    expect(requiring).toEqual(['observability/tracing.ts']);
  });
});
