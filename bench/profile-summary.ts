// Summarises a V8 .cpuprofile (from `npm run bench -- --profile <id>`): top functions and files by self time.
//
// Run: npx tsx bench/profile-summary.ts bench/results/profiles/<dir or file> [top=25]
// Given a directory (one child's profiles, one per thread), it summarises the busiest thread's.

import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}

interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** Self time in ms per function and per file, largest first. */
export function summarizeProfile(profile: Profile): { total: number; functions: Array<[string, number]>; files: Array<[string, number]> } {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000);
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
  const top = Number(process.argv[3] ?? 25);
  const target = process.argv[2];
  const files = statSync(target).isDirectory() ? readdirSync(target).filter((f) => f.endsWith('.cpuprofile')).map((f) => join(target, f)) : [target];
  const busy = (x: ReturnType<typeof summarizeProfile>): number => x.total - (x.functions.find(([n]) => n === '(idle)')?.[1] ?? 0);
  const s = files.map((f) => summarizeProfile(JSON.parse(readFileSync(f, 'utf8')) as Profile)).sort((a, b) => busy(b) - busy(a))[0];
  const pct = (ms: number): string => `${((100 * ms) / s.total).toFixed(1).padStart(5)} %  ${ms.toFixed(0).padStart(7)} ms`;
  console.log(`total sampled: ${s.total.toFixed(0)} ms\n\nby function (self):`);
  for (const [name, ms] of s.functions.slice(0, top)) console.log(`${pct(ms)}  ${name}`);
  console.log('\nby file (self):');
  for (const [name, ms] of s.files.slice(0, 15)) console.log(`${pct(ms)}  ${name}`);
}
