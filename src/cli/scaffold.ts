// The scaffold's templates: the files of templates/init/ (shipped in the package), their `{{placeholders}}` filled in and their `@if` blocks kept or dropped, written into an empty folder.

import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where the templates are: `templates/init/` of the package (`src/cli/` and `dist/cli/` are both two levels down). */
export const TEMPLATES_DIR = fileURLToPath(new URL('../../templates/init/', import.meta.url));

/** What a template is rendered with: text for `{{name}}` placeholders, and the flags its `@if` lines test. */
export interface TemplateValues {
  /** Placeholder values by name. */
  text: Readonly<Record<string, string>>;
  /** Flags by name, for `@if flag`, `@if !flag` and `@else`. */
  flags: Readonly<Record<string, boolean>>;
}

/** A rendered file: its path in the project (`/`-separated) and its content. */
export interface RenderedFile {
  /** The path relative to the project folder, e.g. `src/crd.ts`. */
  path: string;
  /** The file's text. */
  content: string;
}

/** Templates stored under another name than the file they make (npm would leave a `.gitignore` out of the package). */
const RENAMED: Readonly<Record<string, string>> = { gitignore: '.gitignore', dockerignore: '.dockerignore', gitkeep: '.gitkeep' };

/** A line that is a directive: `// @if flag`, `# @else`, `<!-- @end -->`. */
const DIRECTIVE = /^\s*(?:\/\/|#|<!--)\s*@(if|else|end)\b\s*(!?[A-Za-z]\w*)?\s*(?:-->)?\s*$/;
const PLACEHOLDER = /\{\{(\w+)\}\}/g;

/**
 * Renders one template: keeps the lines of each `@if flag … [@else …] @end` block whose condition
 * holds (blocks nest; the directive lines themselves are dropped), then fills every `{{name}}`.
 * Throws naming the template and the line for an unknown flag or placeholder or an unbalanced block.
 */
export function renderTemplate(source: string, values: TemplateValues, where: string): string {
  const out: string[] = [];
  const stack: Array<{ keep: boolean; line: number; sawElse: boolean }> = [];
  const keeping = (): boolean => stack.every((b) => b.keep);
  source.split('\n').forEach((line, index) => {
    const at = `${where}:${index + 1}`;
    const directive = DIRECTIVE.exec(line);
    if (directive === null) {
      if (keeping()) out.push(line.replace(PLACEHOLDER, (_m, key: string) => placeholder(values, key, at)));
      return;
    }
    const [, word, condition] = directive;
    if (word === 'if') {
      if (condition === undefined) throw new Error(`${at}: @if needs a flag`);
      const negated = condition.startsWith('!');
      const flag = negated ? condition.slice(1) : condition;
      if (!Object.hasOwn(values.flags, flag)) throw new Error(`${at}: unknown flag ${JSON.stringify(flag)} (known: ${Object.keys(values.flags).join(', ')})`);
      stack.push({ keep: values.flags[flag] !== negated, line: index + 1, sawElse: false });
      return;
    }
    const block = stack.at(-1);
    if (block === undefined) throw new Error(`${at}: @${word} without @if`);
    if (word === 'else') {
      if (block.sawElse) throw new Error(`${at}: a second @else for the @if of line ${block.line}`);
      block.keep = !block.keep;
      block.sawElse = true;
    } else stack.pop();
  });
  if (stack.length > 0) throw new Error(`${where}:${stack.at(-1)!.line}: @if without @end`);
  return out.join('\n');
}

function placeholder(values: TemplateValues, key: string, at: string): string {
  if (!Object.hasOwn(values.text, key)) throw new Error(`${at}: unknown placeholder {{${key}}}`);
  return values.text[key];
}

/** Every file under `dir`, as `/`-separated paths relative to it, sorted. */
async function listFiles(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  return entries
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)).split(sep).join('/'))
    .sort();
}

/**
 * Renders every template under `templatesDir` whose `include(path)` is true (the path as stored,
 * e.g. `src/webhooks.ts`): its path's placeholders filled, `gitignore` named `.gitignore`. Nothing is
 * written; a template error throws before any file exists.
 */
export async function renderTemplates(templatesDir: string, values: TemplateValues, include: (path: string) => boolean): Promise<RenderedFile[]> {
  const files: RenderedFile[] = [];
  for (const stored of await listFiles(templatesDir)) {
    if (!include(stored)) continue;
    const source = await readFile(join(templatesDir, stored), 'utf8');
    const renamed = stored.split('/').map((part) => RENAMED[part] ?? part).join('/');
    files.push({ path: renderTemplate(renamed, values, `${stored} (its path)`), content: renderTemplate(source, values, stored) });
  }
  return files;
}

/**
 * Writes `files` under `dir`, each with the `wx` flag: a file that exists (written meanwhile by
 * someone else) fails the write instead of being overwritten.
 */
export async function writeFiles(dir: string, files: readonly RenderedFile[]): Promise<void> {
  for (const file of files) {
    const path = join(dir, ...file.path.split('/'));
    await mkdir(dirname(path), { recursive: true });
    await writeFile(path, file.content, { flag: 'wx' });
  }
}
