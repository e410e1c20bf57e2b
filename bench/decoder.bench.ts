// Benchmark of the watch decoder against a raw "stream → split on \n → JSON.parse → Map.set" loop.
//
// Run: npx tsx bench/decoder.bench.ts [events=5000] [chunkBytes=65536]   (not part of npm test)
// Both sides read the same pre-generated body (~4.5 KB pod events) from an in-memory Readable cut into
// socket-sized chunks and store each object in a Map by name. Prints events/second of each, their
// ratio (decoder / raw; the target is ≥ 0.8) as the median of alternating repetitions, and min/max.

import { Readable } from 'node:stream';
import { decodeWatchStream } from '../src/listwatch/index.js';
import { makePod } from './lib/pods.js';

const EVENTS = Number(process.argv[2] ?? 5_000);
const CHUNK = Number(process.argv[3] ?? 65_536);
const REPETITIONS = 15;

function makeBody(): Buffer {
  const lines: string[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const object = { ...makePod(i), metadata: { ...makePod(i).metadata, resourceVersion: String(1000 + i) } };
    lines.push(`${JSON.stringify({ type: i % 3 === 0 ? 'ADDED' : 'MODIFIED', object })}\n`);
  }
  return Buffer.from(lines.join(''));
}

function chunked(body: Buffer): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < body.length; i += CHUNK) out.push(body.subarray(i, i + CHUNK));
  return out;
}

interface Named {
  object: { metadata: { name: string } };
}

/**
 * The baseline: the least a consumer must do, with no validation and no iterator per event. Only a
 * line split across chunks is copied (the leftover plus the head of the next chunk).
 */
async function raw(chunks: Buffer[]): Promise<number> {
  const map = new Map<string, unknown>();
  let rest: Buffer | undefined;
  for await (const piece of Readable.from(chunks)) {
    const chunk = piece as Buffer;
    let start = 0;
    let nl = chunk.indexOf(10);
    while (nl !== -1) {
      const text =
        rest === undefined
          ? chunk.toString('utf8', start, nl)
          : Buffer.concat([rest, chunk.subarray(0, nl)]).toString('utf8');
      rest = undefined;
      const ev = JSON.parse(text) as Named;
      map.set(ev.object.metadata.name, ev.object);
      start = nl + 1;
      nl = chunk.indexOf(10, start);
    }
    if (start < chunk.length) rest = rest === undefined ? chunk.subarray(start) : Buffer.concat([rest, chunk]);
  }
  return map.size;
}

async function decoder(chunks: Buffer[]): Promise<number> {
  const map = new Map<string, unknown>();
  for await (const ev of decodeWatchStream<Named['object']>(Readable.from(chunks))) {
    map.set(ev.object.metadata.name, ev.object);
  }
  return map.size;
}

async function time(fn: (chunks: Buffer[]) => Promise<number>, chunks: Buffer[]): Promise<number> {
  const start = process.hrtime.bigint();
  const size = await fn(chunks);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  if (size !== EVENTS) throw new Error(`expected ${EVENTS} objects, got ${size}`);
  return ms;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

async function main(): Promise<void> {
  const body = makeBody();
  const chunks = chunked(body);
  console.log(
    `${EVENTS} events, ${(body.length / EVENTS / 1024).toFixed(1)} KB each, ${(body.length / 1e6).toFixed(1)} MB in ${chunks.length} chunks of ${CHUNK} B`,
  );
  await time(raw, chunks); // warm-up
  await time(decoder, chunks);
  const rawMs: number[] = [];
  const decMs: number[] = [];
  const ratios: number[] = [];
  for (let r = 0; r < REPETITIONS; r++) {
    const a = await time(raw, chunks);
    const b = await time(decoder, chunks);
    rawMs.push(a);
    decMs.push(b);
    ratios.push(a / b);
  }
  const rate = (ms: number): string => `${Math.round((EVENTS / ms) * 1000).toLocaleString('en-US')} events/s`;
  console.log(`raw split+parse : ${rate(median(rawMs))} (median ${median(rawMs).toFixed(1)} ms)`);
  console.log(`decodeWatchStream: ${rate(median(decMs))} (median ${median(decMs).toFixed(1)} ms)`);
  console.log(
    `ratio decoder/raw: ${median(ratios).toFixed(3)} (min ${Math.min(...ratios).toFixed(3)}, max ${Math.max(...ratios).toFixed(3)}; target ≥ 0.8)`,
  );
}

await main();
