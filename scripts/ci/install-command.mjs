// Prints the install command docs/getting-started.md gives a user on a given Node version, for the
// install leg (scripts/ci/install-leg.sh): `node scripts/ci/install-command.mjs 20.19.6`.
//
// The commands are the lines of the guide that start with `npm install kube-informer`. A line may end in
// a comment naming the Node versions it is for — `# Node 22.19 or later`, `# Node 20.19 to 22.18` —
// and then the line whose range holds the version is the one; a guide with a single untagged line gives
// that line to every Node. Every such line of README.md must be one of the guide's. Exits 1, saying why, when the guide has
// no command for the version or the README gives one the guide does not.
import { readFileSync } from 'node:fs';

const installLines = (file) =>
  readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8')
    .split('\n')
    .filter((l) => /^npm install kube-informer\b/.test(l))
    .map((l) => l.trimEnd());
const version = process.argv[2];
if (!/^\d+\.\d+\.\d+$/.test(version ?? '')) {
  console.error('usage: node scripts/ci/install-command.mjs <node version, e.g. 20.19.6>');
  process.exit(2);
}

const parse = (v) => v.split('.').map(Number);
const compare = (a, b) => {
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) - (b[i] ?? 0);
  return 0;
};
const want = parse(version);

const lines = installLines('docs/getting-started.md');
const readme = installLines('README.md');
const unchecked = readme.filter((l) => !lines.includes(l));
if (unchecked.length > 0) {
  console.error(`README.md gives install commands that docs/getting-started.md does not (so CI does not run them):\n${unchecked.join('\n')}`);
  process.exit(1);
}
const commands = lines.map((line) => {
  const [command, comment = ''] = line.split(/\s+#\s*/, 2);
  const range = /Node (\d+\.\d+(?:\.\d+)?)(?: or later| to (\d+\.\d+(?:\.\d+)?))/.exec(comment);
  if (range === null) return { command: command.trim(), covers: undefined };
  const from = parse(range[1]);
  const to = range[2] === undefined ? undefined : [...parse(range[2]), Infinity].slice(0, 3);
  return { command: command.trim(), covers: compare(want, from) >= 0 && (to === undefined || compare(want, to) <= 0) };
});

const tagged = commands.filter((c) => c.covers !== undefined);
const chosen = tagged.length > 0 ? tagged.filter((c) => c.covers) : commands;
if (chosen.length !== 1) {
  console.error(
    `docs/getting-started.md gives ${chosen.length} install commands for Node ${version} (lines starting "npm install kube-informer"` +
      `${tagged.length > 0 ? ' whose "# Node …" comment covers it' : ''}); expected exactly one:\n${lines.join('\n') || '(none)'}`,
  );
  process.exit(1);
}
console.log(chosen[0].command);
