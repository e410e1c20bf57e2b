// The API report: one reviewed file per entry point (etc/*.api.md), so every change of the public
// surface is a diff a person reads. `--check` (CI) fails when a report is out of date; without it the
// reports are rewritten. Runs on the declarations of `npm run build` (dist/).
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const check = process.argv.includes('--check');
let failed = false;

for (const [subpath, target] of Object.entries(pkg.exports)) {
  if (typeof target !== 'object' || target.types === undefined) continue;
  const name = subpath === '.' ? 'kube-informer' : `kube-informer-${subpath.slice(2).replaceAll('/', '-')}`;
  const config = ExtractorConfig.prepare({
    configObjectFullPath: join(root, 'api-extractor.json'),
    packageJsonFullPath: join(root, 'package.json'),
    configObject: {
      projectFolder: root,
      mainEntryPointFilePath: join(root, target.types),
      compiler: { tsconfigFilePath: join(root, 'tsconfig.build.json') },
      apiReport: { enabled: true, reportFileName: `${name}.api.md`, reportFolder: join(root, 'etc'), reportTempFolder: join(root, 'dist/api-report') },
      docModel: { enabled: false },
      dtsRollup: { enabled: false },
      tsdocMetadata: { enabled: false },
      messages: {
        compilerMessageReporting: { default: { logLevel: 'warning' } },
        extractorMessageReporting: {
          default: { logLevel: 'warning' },
          'ae-missing-release-tag': { logLevel: 'none' },
          'ae-forgotten-export': { logLevel: 'none' },
          'ae-unresolved-link': { logLevel: 'none' },
          'ae-undocumented': { logLevel: 'none' },
        },
        tsdocMessageReporting: { default: { logLevel: 'none' } },
      },
    },
  });
  const result = Extractor.invoke(config, { localBuild: !check, showVerboseMessages: false, messageCallback: (m) => {
    if (m.logLevel === 'warning' && m.messageId !== 'console-api-report-copied') m.handled = false;
  } });
  if (!result.succeeded || (check && result.apiReportChanged)) {
    failed = true;
    console.error(`api report ${name}: ${result.apiReportChanged ? 'the public API changed; run `npm run api` and review etc/' + name + '.api.md' : 'failed'} (${result.errorCount} errors)`);
  } else {
    console.log(`api report ${name}: ${result.apiReportChanged ? 'updated' : 'unchanged'}`);
  }
}
process.exitCode = failed ? 1 : 0;
