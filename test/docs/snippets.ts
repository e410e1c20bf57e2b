// Finds the TypeScript snippets of the README and the guides, with the directives that mark them.
//
// A snippet is a fenced block whose info string is `ts` or `typescript`. The line before its fence may
// hold one directive, an HTML comment (invisible on npm and GitHub):
//   <!-- snippet: skip — why -->   not compiled; the reason is required (keep these rare)
//   <!-- snippet: name <id> -->    compiled, and other snippets of the same page may build on it
//   <!-- snippet: after <id> -->   compiled after the named snippet of the same page, as one module:
//                                  for a page that builds one program step by step
// `after` and `name` combine: `<!-- snippet: after setup, name step2 -->`.

import { readFileSync } from 'node:fs';

/** One fenced TypeScript block. */
export interface Snippet {
  /** The markdown file, relative to the repository (`docs/controllers.md`). */
  file: string;
  /** The 1-based line of the snippet's first code line. */
  line: number;
  /** The code, the fence's indentation removed. */
  code: string;
  /** `<!-- snippet: name <id> -->`. */
  name?: string;
  /** `<!-- snippet: after <id> -->`: the snippet this one continues. */
  after?: string;
  /** `<!-- snippet: skip — reason -->`: why it is not compiled. */
  skip?: string;
  /** `<!-- snippet: given … -->`: the hidden declarations compiled before the code. */
  given?: string;
}

const FENCE = /^(\s*)(`{3,}|~{3,})\s*([\w-]*)/;
const DIRECTIVE = /^\s*<!--\s*snippet:\s*([^\n]*?)\s*(?:\n([^]*?))?\s*-->\s*$/;

/** The snippets of one markdown text. Throws on a malformed directive, naming the file and line. */
export function extractSnippets(file: string, text: string): Snippet[] {
  const lines = text.split('\n');
  const out: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = FENCE.exec(lines[i]!);
    if (open === null) continue;
    const [, indent, fence, lang] = open as unknown as [string, string, string, string];
    let end = i + 1;
    while (end < lines.length && !new RegExp(`^\\s*${fence[0]}{${fence.length},}\\s*$`).test(lines[end]!)) end++;
    if (lang === 'ts' || lang === 'typescript') {
      const code = lines.slice(i + 1, end).map((l) => (l.startsWith(indent) ? l.slice(indent.length) : l.trimStart()));
      const snippet: Snippet = { file, line: i + 2, code: code.join('\n') };
      let from = i - 1;
      if (from >= 0 && lines[from]!.trimEnd().endsWith('-->')) while (from > 0 && !lines[from]!.includes('<!--')) from--;
      const directive = from >= 0 ? DIRECTIVE.exec(lines.slice(from, i).join('\n')) : null;
      if (directive !== null) Object.assign(snippet, parseDirective(directive[1]!, directive[2], `${file}:${from + 1}`));
      out.push(snippet);
    }
    i = end;
  }
  return out;
}

function parseDirective(head: string, body: string | undefined, where: string): Pick<Snippet, 'name' | 'after' | 'skip' | 'given'> {
  const skip = /^skip\s*(?:—|–|-|:)\s*(\S.*)$/.exec(head);
  if (skip !== null && body === undefined) return { skip: skip[1]! };
  const out: Pick<Snippet, 'name' | 'after' | 'given'> = {};
  for (const part of head.split(',')) {
    if (part.trim() === 'given' && body !== undefined) {
      out.given = body;
      continue;
    }
    const m = /^\s*(name|after)\s+([\w-]+)\s*$/.exec(part);
    if (m === null) throw new Error(`${where}: unknown snippet directive "${head}" (expected "skip — <reason>", "name <id>", "after <id>" or "given" and lines of code)`);
    out[m[1] as 'name' | 'after'] = m[2]!;
  }
  if (body !== undefined && out.given === undefined) throw new Error(`${where}: snippet directive "${head}" has lines after it but no "given"`);
  return out;
}

/** The snippets of the given files (paths relative to `root`). */
export function snippetsOf(root: string, files: readonly string[]): Snippet[] {
  return files.flatMap((file) => extractSnippets(file, readFileSync(`${root}/${file}`, 'utf8')));
}
