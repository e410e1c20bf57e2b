// The shard ring at ten replicas and 300 000 objects, by simulation: prints the table of
// docs/sharding.md ("Figures: ten replicas, by simulation").
//
// Run: npx tsx bench/ring-scale.ts [seeds=10] [events=8]   (not part of npm test; about a minute)
// Each seed is one schedule of test/sharding/ring-scale.ts on the model world of the ring tests (fake
// clock, in-memory Lease store answering in 0–400 ms, clocks 2 % fast or slow): ten replicas join, then
// `events` joins, graceful leaves, SIGKILLs and stalls (a frozen process, 3–30 s), each followed by
// quiescence, then a storm of four events 2–8 s apart. The same schedules run at 64 slots (the default)
// and at 128; the objects are 300 000 seeded uids hashed to the slots as ShardRing.slotOf does.
// Deterministic: the same arguments print the same table.

import { objectsPerSlot, scaleSchedule, type Phase, type ScaleRun } from '../test/sharding/ring-scale.js';

const SEEDS = Number(process.argv[2] ?? 10);
const EVENTS = Number(process.argv[3] ?? 8);
const OBJECTS = 300_000;
const SLOT_COUNTS = [64, 128];

const per128 = objectsPerSlot(128, OBJECTS);
const perSlot = (slots: number): number[] => (slots === 128 ? per128 : Array.from({ length: 64 }, (_, i) => per128[2 * i] + per128[2 * i + 1]));

const runs = new Map<number, ScaleRun[]>();
for (const slots of SLOT_COUNTS) {
  const list: ScaleRun[] = [];
  for (let seed = 1; seed <= SEEDS; seed++) list.push(await scaleSchedule(seed, perSlot(slots), 10, EVENTS));
  runs.set(slots, list);
}

const num = (n: number): string => Math.round(n).toLocaleString('en-US').replace(/,/g, ' ');
const pct = (n: number, of: number): string => `${((100 * n) / of).toFixed(1)} %`;
const phases = (slots: number): Phase[] => runs.get(slots)!.flatMap((r) => r.phases);

/** The largest load at `n` live replicas: objects, share, and the phases over the bound. */
function load(slots: number, n: number): string {
  const at = phases(slots).filter((p) => p.n === n);
  if (at.length === 0) return '—';
  const worst = Math.max(...at.map((p) => p.maxObjects));
  const over = at.filter((p) => p.maxObjects > p.loadBound).length;
  return `${num(worst)} (${pct(worst, OBJECTS)}; ${Math.max(...at.map((p) => p.maxSlots))} slots)${over > 0 ? `, **over in ${over} of ${at.length}**` : ''}`;
}

/** The most slots (and objects) an event of `kind` moved, against its bound. */
function moves(slots: number, kind: (p: Phase) => boolean): string {
  const at = phases(slots).filter(kind);
  if (at.length === 0) return '—';
  const worst = at.reduce((a, p) => (p.movedSlots > a.movedSlots ? p : a));
  const over = at.filter((p) => p.moveBound !== undefined && p.movedSlots > p.moveBound).length;
  const objects = Math.max(...at.map((p) => p.movedObjects));
  return `${worst.movedSlots} of ${worst.moveBound} (${at.length} event${at.length === 1 ? '' : 's'}; ≤ ${pct(objects, OBJECTS)} of the objects)${over > 0 ? `, **over in ${over}**` : ''}`;
}

const isStall = (p: Phase): boolean => p.event.startsWith('stall');
const row = (what: string, cell: (slots: number) => string, bound: string): string => `| ${what} | ${SLOT_COUNTS.map(cell).join(' | ')} | ${bound} |`;
const all = (slots: number): ScaleRun[] => runs.get(slots)!;

console.log(`${SEEDS} seeded schedules of ${EVENTS} events and a storm, 10 replicas (9–11 live), ${num(OBJECTS)} objects:\n`);
console.log(`| what | ${SLOT_COUNTS.map((s) => `${s} slots${s === 64 ? ' (default)' : ''}`).join(' | ')} | bound |`);
console.log(`| --- | ${SLOT_COUNTS.map(() => '---').join(' | ')} | --- |`);
for (const n of [9, 10, 11]) console.log(row(`most objects on one replica, N = ${n} live`, (s) => load(s, n), `≤ ${num((1.1 * OBJECTS) / n)} (1.1/N)`));
console.log(row('slots moved by a join (most, of the bound)', (s) => moves(s, (p) => p.event === 'join'), 'ceil(slots/N) after'));
console.log(row('slots moved by a graceful leave', (s) => moves(s, (p) => p.event === 'leave'), 'ceil(slots/N) before'));
console.log(row('slots moved by a SIGKILL', (s) => moves(s, (p) => p.event === 'kill'), 'ceil(slots/N) before'));
console.log(row('slots moved by a stall under 12 s', (s) => moves(s, (p) => isStall(p) && p.moveBound === 0), '0'));
console.log(row('slots moved by a stall of 12–30 s', (s) => moves(s, (p) => isStall(p) && p.moveBound !== 0), '2 × ceil(slots/N) (a leave and a rejoin)'));
console.log(row('most slots one replica owned at any instant (transients too)', (s) => String(Math.max(...all(s).map((r) => r.peakSlots))), 'ceil(slots/9)'));
console.log(row('quiescent points not settled (a slot without exactly one owner, shares apart)', (s) => String(phases(s).filter((p) => p.problems.length > 0).length), '0'));
console.log(row('two replicas engaged in one slot (checked after every timer)', (s) => String(all(s).reduce((a, r) => a + r.overlaps.length, 0)), '0'));
