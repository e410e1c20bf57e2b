// Summarises a V8 .cpuprofile (from `npm run bench -- --profile <id>`): top functions and files by self time.
//
// Run: npx tsx bench/profile-summary.ts bench/results/profiles/<dir or file> [top=25] [--within NAME]
// Given a directory (one child's profiles, one per thread), it summarises the busiest thread's.
// `--within NAME` keeps only the samples from the first to the last whose stack holds a function named
// NAME: the operator phase's saturation window (`--within Controller.for.owns.build.name`, the
// kube-informer side's reconcile) is some 30 ms of a process that ran for seconds.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: Array<ProfileNode & { children?: number[] }>;
  samples: number[];
  timeDeltas: number[];
}

/** The sample indices from the first to the last whose stack holds a function named `name` (all without one). */
function windowOf(profile: Profile, name: string | undefined): [number, number] {
  if (name === undefined) return [0, profile.samples.length - 1];
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const named = new Set(profile.nodes.filter((n) => n.callFrame.functionName === name).map((n) => n.id));
  const holds = (id: number | undefined): boolean => id !== undefined && (named.has(id) || holds(parent.get(id)));
  const hits = profile.samples.flatMap((id, i) => (holds(id) ? [i] : []));
  if (hits.length === 0) throw new Error(`no sample has ${name} on its stack`);
  return [hits[0], hits[hits.length - 1]];
}

/** Self time in ms per function and per file, largest first (only the window of `within`, when given). */
export function summarizeProfile(profile: Profile, within?: string): { total: number; functions: Array<[string, number]>; files: Array<[string, number]> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  const [from, to] = windowOf(profile, within);
  for (let i = from; i <= to; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
  const fn = new Map<string, number>();
  const file = new Map<string, number>();
  let total = 0;
  for (const [id, ms] of self) {
    const n = byId.get(id)!;
    const url = n.callFrame.url.replace(/^file:\/\/.*?\/(node_modules|src|bench)\//, '$1/');
    const name = `${n.callFrame.functionName || '(anonymous)'} ${url ? `${url}:${n.callFrame.lineNumber + 1}` : ''}`.trim();
    fn.set(name, (fn.get(name) ?? 0) + ms);
    const f = url === '' ? n.callFrame.functionName : url;
    file.set(f, (file.get(f) ?? 0) + ms);
    total += ms;
  }
  const sort = (m: Map<string, number>): Array<[string, number]> => [...m].sort((a, b) => b[1] - a[1]);
  return { total, functions: sort(fn), files: sort(file) };
}

if (process.argv[1]?.endsWith('profile-summary.ts')) {
  const args = process.argv.slice(2);
  const at = args.indexOf('--within');
  const within = at === -1 ? undefined : args.splice(at, 2)[1];
  const top = Number(args[1] ?? 25);
  const target = args[0];
  const files = statSync(target).isDirectory() ? readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(target, f)) : [target];
  const busy = (x: ReturnType<typeof summarizeProfile>): number => x.total - (x.functions.find(([n]) => n === '(idle)')?.[1] ?? 0);
  const s = files.map((f) => summarizeProfile(JSON.parse(readFileSync(f, 'utf8')) as Profile, within)).sort((a, b) => busy(b) - busy(a))[0];
  const pct = (ms: number): string => `${((100 * ms) / s.total).toFixed(1).padStart(5)} %  ${ms.toFixed(0).padStart(7)} ms`;
  console.log(`total sampled: ${s.total.toFixed(0)} ms\n\nby function (self):`);
  for (const [name, ms] of s.functions.slice(0, top)) console.log(`${pct(ms)}  ${name}`);
  console.log('\nby file (self):');
  for (const [name, ms] of s.files.slice(0, 15)) console.log(`${pct(ms)}  ${name}`);
}
