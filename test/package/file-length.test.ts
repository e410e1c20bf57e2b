// No source file passes 600 lines (CONTRIBUTING.md, "Habits"): `npm run lint` refuses one with ESLint's
// `max-lines` over src/. This proves the rule is on for every file under src/, counts every line (blank
// lines and comments too, as `wc -l` does), and fires at 601.

import { readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ESLint, Linter } from 'eslint';
import { describe, expect, it } from 'vitest';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Every file under `dir`, as paths relative to the repository's root. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)))
    .sort();
}

/** A file of `n` lines, each a comment (which the rule must count). */
const linesOf = (n: number): string => Array.from({ length: n }, (_, i) => `// line ${i + 1}`).join('\n') + '\n';

describe('the file-length rule', () => {
  it('lint refuses a file of 601 lines anywhere under src/ and passes one of 600', async () => {
    const files = filesUnder(join(root, 'src'));
    expect(files).toContain('src/informer/shared-index-informer.ts');
    const eslint = new ESLint({ cwd: root });
    const linter = new Linter();
    const verdicts = new Map<string, string>();
    for (const file of files) {
      const config = (await eslint.calculateConfigForFile(file)) as { rules?: Record<string, Linter.RuleEntry> } | undefined;
      const rule = config?.rules?.['max-lines'];
      if (rule === undefined) {
        verdicts.set(file, 'no max-lines rule');
        continue;
      }
      const at600 = linter.verify(linesOf(600), { rules: { 'max-lines': rule } });
      const at601 = linter.verify(linesOf(601), { rules: { 'max-lines': rule } });
      verdicts.set(file, `${at600.length} at 600, ${at601.map((m) => m.message).join('; ')} at 601`);
    }
    const expected = '0 at 600, File has too many lines (601). Maximum allowed is 600. at 601';
    expect([...verdicts].filter(([, verdict]) => verdict !== expected)).toEqual([]);
  });
});
