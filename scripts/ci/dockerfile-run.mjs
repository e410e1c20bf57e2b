// Runs a Dockerfile's build steps without docker, for CI where no image registry is reachable: each stage
// is a folder standing for the image's filesystem, FROM starts one, WORKDIR / COPY [--from] / ENV / RUN /
// USER / CMD do what they say in it, with this machine's Node standing in for the base image's.
//   node scripts/ci/dockerfile-run.mjs <context dir> <out dir>
// Prints the final stage as JSON on the last line: { root, workdir, env, user, cmd } — what
// scripts/ci/scaffold-pod.mjs starts. An instruction it does not know fails the run, naming the line.
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, statSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';

const [context, out] = process.argv.slice(2).map((p) => resolve(p));
if (context === undefined || out === undefined) {
  console.error('usage: node scripts/ci/dockerfile-run.mjs <context dir> <out dir>');
  process.exit(2);
}

/** The Dockerfile's instructions: continuation lines joined, comments and blank lines dropped. */
function instructions(text) {
  const result = [];
  let pending = '';
  let start = 0;
  text.split('\n').forEach((raw, index) => {
    const line = raw.trim();
    if (pending === '' && (line === '' || line.startsWith('#'))) return;
    if (pending === '') start = index + 1;
    pending += line.endsWith('\\') ? `${line.slice(0, -1)} ` : line;
    if (!line.endsWith('\\')) {
      const [word, ...rest] = pending.split(/\s+/);
      result.push({ line: start, word: word.toUpperCase(), args: rest.join(' ') });
      pending = '';
    }
  });
  return result;
}

const stages = new Map(); // name or index → stage
let stage;
const inStage = (s, path) => join(s.root, path.startsWith('/') ? path : join(s.workdir, path));

for (const { line, word, args } of instructions(readFileSync(join(context, 'Dockerfile'), 'utf8'))) {
  const where = `Dockerfile:${line} ${word} ${args}`;
  console.log(`== ${where}`);
  if (word === 'FROM') {
    const [image, as, name] = args.split(/\s+/);
    const index = stages.size;
    stage = { root: join(out, `stage-${index}`), workdir: '/', env: {}, user: undefined, cmd: undefined, image };
    mkdirSync(stage.root, { recursive: true });
    stages.set(String(index), stage);
    if (as?.toUpperCase() === 'AS' && name !== undefined) stages.set(name, stage);
    console.log(`   ${image}: this machine's Node ${process.version} stands in for the image's`);
  } else if (stage === undefined) {
    throw new Error(`${where}: before the first FROM`);
  } else if (word === 'WORKDIR') {
    stage.workdir = args.startsWith('/') ? args : join(stage.workdir, args);
    mkdirSync(join(stage.root, stage.workdir), { recursive: true });
  } else if (word === 'ENV') {
    for (const pair of args.split(/\s+/)) {
      const eq = pair.indexOf('=');
      if (eq < 1) throw new Error(`${where}: ENV takes KEY=value pairs`);
      stage.env[pair.slice(0, eq)] = pair.slice(eq + 1);
    }
  } else if (word === 'COPY') {
    const words = args.split(/\s+/);
    const from = words[0].startsWith('--from=') ? words.shift().slice('--from='.length) : undefined;
    if (words.some((w) => w.startsWith('--'))) throw new Error(`${where}: only --from is supported`);
    const dest = words.pop();
    const source = from === undefined ? undefined : stages.get(from);
    if (from !== undefined && source === undefined) throw new Error(`${where}: no stage ${from}`);
    for (const src of words) {
      const path = source === undefined ? join(context, src) : inStage(source, src);
      const target = inStage(stage, dest);
      // Docker's rule: a directory's contents go to dest; a file goes into dest when dest ends in / (or there are several).
      const into = !statSync(path).isDirectory() && (dest.endsWith('/') || words.length > 1);
      cpSync(path, into ? join(target, basename(path)) : target, { recursive: true });
    }
  } else if (word === 'RUN') {
    // A cache mount (`--mount=type=cache,target=/root/.npm`) keeps a cache out of the image: here the host's cache is that cache.
    const command = args.replace(/^(--mount=\S+\s+)+/, '');
    if (/^--/.test(command)) throw new Error(`${where}: only --mount is supported`);
    const run = spawnSync('sh', ['-c', command], { cwd: join(stage.root, stage.workdir), env: { ...process.env, ...stage.env }, stdio: 'inherit' });
    if (run.status !== 0) throw new Error(`${where}: exited ${run.status ?? run.signal}`);
  } else if (word === 'USER') {
    stage.user = args;
  } else if (word === 'CMD') {
    stage.cmd = JSON.parse(args);
    if (!Array.isArray(stage.cmd)) throw new Error(`${where}: only the exec form (a JSON array) is supported`);
  } else {
    throw new Error(`${where}: not supported by this stand-in for docker build`);
  }
}
if (stage?.cmd === undefined) throw new Error('Dockerfile: the last stage has no CMD');
console.log(JSON.stringify({ root: stage.root, workdir: stage.workdir, env: stage.env, user: stage.user, cmd: stage.cmd }));
