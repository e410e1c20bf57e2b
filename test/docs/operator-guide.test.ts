// The operator guide (docs/operator-guide.md) shows the Backup example's own code: each named step is the
// body of its file in examples/backup/ or of its test, imports aside (issue 47: docs a user can paste).

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { repoRoot } from './compile.js';
import { extractSnippets } from './snippets.js';

/** The guide's step → the file whose code it shows. */
const STEPS: Record<string, string> = {
  crd: 'examples/backup/crd.ts',
  operator: 'examples/backup/operator.ts',
  webhooks: 'examples/backup/webhooks.ts',
  run: 'examples/backup/main.ts',
  'fake-test': 'test/examples/backup.test.ts',
  'envtest-test': 'test/apiserver/backup-operator.test.ts',
};

/** The code without its import lines (live or shown as `// import …`), its opening comment lines and surrounding blank lines. */
function body(code: string): string {
  const lines = code.split('\n');
  let i = 0;
  while (i < lines.length && (lines[i]!.startsWith('//') || lines[i]!.startsWith('import ') || lines[i]!.trim() === '')) i++;
  return lines.slice(i).join('\n').trimEnd();
}

describe('docs/operator-guide.md', () => {
  const snippets = extractSnippets('docs/operator-guide.md', readFileSync(`${repoRoot}/docs/operator-guide.md`, 'utf8'));

  it.each(Object.entries(STEPS))('step %s is the code of %s', (step, file) => {
    const snippet = snippets.find((s) => s.name === step);
    expect(snippet, `a snippet named ${step}`).toBeDefined();
    const source = body(readFileSync(`${repoRoot}/${file}`, 'utf8'));
    const shown = body(snippet!.code);
    expect(shown.length).toBeGreaterThan(200);
    // The file may go on after the step (main.ts's process entry, shown in a step of its own).
    expect(source.startsWith(shown) ? shown : source).toBe(shown);
  });

  it('imports in each step from the package, never from the repository', () => {
    for (const step of Object.keys(STEPS)) {
      const code = snippets.find((s) => s.name === step)?.code ?? '';
      expect(code).not.toMatch(/from '\.\.\/\.\.\//);
    }
  });
});
