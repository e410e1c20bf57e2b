// The "Restart storm" section of docs/benchmarks.md, rendered from a results file's storm section (bench/lib/storm-phase.ts).

import { STORM_SIDES, type StormSideId } from './storm-args.js';
import { stormFigures, type StormSection } from './storm-phase.js';
import { fmt } from './stats.js';

/** Table labels of the storm sides; the kube-informer ones say what their build's scheduler was. */
function label(id: StormSideId, kiPriority: boolean): string {
  if (id === 'controller-runtime') return 'controller-runtime v0.25.2 (Go), its default priority queue';
  if (id === 'kube-informer-fifo') return 'kube-informer `Controller`, `priority: false` (FIFO, the order before issue 50)';
  return kiPriority ? 'kube-informer `Controller`, its priority scheduler (the default)' : 'kube-informer `Controller` (a build without the priority scheduler: FIFO)';
}

const SHORT: Record<StormSideId, string> = { 'kube-informer': 'kube-informer (priority)', 'kube-informer-fifo': 'kube-informer (FIFO)', 'controller-runtime': 'controller-runtime' };

/** The "Restart storm" section of docs/benchmarks.md. */
export function stormMarkdown(s: StormSection): string {
  const a = s.args;
  const sides = STORM_SIDES.filter((id) => s.runs.some((r) => r.side === id));
  const figs = new Map(sides.map((id) => [id, stormFigures(s.runs.filter((r) => r.side === id))]));
  const out: string[] = [`## Restart storm: a new primary while ${fmt(a.primaries)} are reconciled again`, ''];
  out.push(
    `Measured on ${s.date.slice(0, 10)} with \`${s.command}\` (${fmt(s.durationMinutes, 0)} min; kube-apiserver ${s.serverVersion} and its etcd on the same machine, \`scripts/apiserver/start.sh\`; Node ${s.node}, ${s.cpus}). ` +
      `The operator of the head to head above (a BenchSet owning ${a.children} ConfigMaps; bench/controller-runtime/main.go and bench/operator/kube-informer.ts), concurrency ${a.concurrency} on every side. ` +
      `${fmt(a.primaries)} BenchSets are created and converged once${s.resetSeconds === undefined ? '' : ` (created in ${fmt(s.resetSeconds, 0)} s, converged in ${fmt(s.convergeSeconds ?? Number.NaN, 0)} s)`}. ` +
      `Then each side is restarted ${a.creations} time${a.creations === 1 ? '' : 's'} (order rotated per round; one process at a time): the fresh process lists the world and reconciles every set again — the storm; each reconcile waits ${fmt(a.workMs, 1)} ms first on every side (an outside call: without one a converged reconcile takes microseconds and the storm is over before anything can wait in it), and writes nothing. ` +
      `${fmt(a.delayMs)} ms after the side's first reconcile began (its own report), the harness creates one new BenchSet, annotated so the side reports its reconcile starts; ` +
      'the latency is from the create\'s send (the client\'s clock: creationTimestamp has whole seconds) to the start of that set\'s first reconcile, both epoch milliseconds on one machine. ' +
      'The storm is from the first reconcile\'s start to the end of as many reconciles as there were sets before the create. One creation per restart, so each is a restart of its own (new sets stay: each restart has one more set).',
    '',
    'Both priority queues put the initial list\'s adds at low priority (controller-runtime: `LowPriority` = -100 on `IsInInitialList` creates, its default since v0.23; kube-informer: `Priority.low`), so the new set — a watch event after the caches synced — starts before the storm\'s remaining sets; a FIFO queue reaches it after them.',
    '',
  );
  if (!s.kiPriority) out.push('**This run\'s build had no priority scheduler**: its kube-informer sides were both FIFO.', '');
  const head = ['side', 'restarts', 'create → first reconcile p50 (ms)', 'p99 (ms)', 'max (ms)', 'storm, median (ms)', 'created into the storm, median (ms)'];
  const rows = sides.map((id) => {
    const f = figs.get(id)!;
    return [label(id, s.kiPriority), fmt(f.runs), fmt(f.p50, 1), fmt(f.p99, 1), fmt(f.max, 1), fmt(f.stormMedian), fmt(f.createdAtMedian)];
  });
  out.push(`| ${head.join(' | ')} |`, `| ${head.map((_, i) => (i === 0 ? '---' : '---:')).join(' | ')} |`, ...rows.map((r) => `| ${r.join(' | ')} |`), '');
  out.push(`Quantiles index the sorted latencies at ⌊p·n⌋: of ${a.creations} creations per side, p99 is the ${Math.floor(0.99 * a.creations) + 1 === a.creations ? 'largest' : `${Math.floor(0.99 * a.creations) + 1}th`}.`, '');
  const slow = sides.flatMap((id) => {
    const runs = s.runs.filter((r) => r.side === id && r.latencyMs !== undefined && r.gcMs !== undefined).sort((x, y) => y.latencyMs! - x.latencyMs!).slice(0, 3);
    return runs.length === 0 ? [] : [`${SHORT[id]}: ${runs.map((r) => `${fmt(r.latencyMs!, 1)} ms (${fmt(r.gcMs!, 1)} ms in ${r.gcPauses} pause${r.gcPauses === 1 ? '' : 's'})`).join(', ')}`];
  });
  if (slow.length > 0) out.push(`The three slowest creations of each Node side, with the collector's pauses that began between the create's send and the reconcile's start (Node's \`gc\` performance entries): ${slow.join('; ')}.`, '');
  const ki = figs.get('kube-informer');
  const others = sides.filter((id) => id !== 'kube-informer').map((id) => figs.get(id)!);
  if (ki !== undefined && others.length > 0) {
    const lowest = (pick: (f: ReturnType<typeof stormFigures>) => number): string => {
      const v = pick(ki);
      const rest = others.map(pick);
      if (!s.kiPriority || !Number.isFinite(v) || rest.some((x) => !Number.isFinite(x))) return 'not measured';
      return rest.every((x) => v < x) ? 'met' : `**missed** (${fmt(v, 1)} ms against ${fmt(Math.min(...rest), 1)} ms)`;
    };
    out.push('| target (issue 50, same run, same server, equal concurrency) | verdict |', '| --- | ---: |');
    out.push(`| create → first reconcile p50: kube-informer's priority scheduler lowest | ${lowest((f) => f.p50)} |`);
    out.push(`| create → first reconcile p99: kube-informer's priority scheduler lowest | ${lowest((f) => f.p99)} |`, '');
  }
  const errors = [...s.errors, ...s.runs.flatMap((r) => r.errors.map((e) => `${r.side} rep ${r.rep}: ${e}`))];
  if (errors.length > 0) out.push('Errors:', '', ...errors.map((e) => `- ${e.slice(0, 400)}`), '');
  return out.join('\n');
}
