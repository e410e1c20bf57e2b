// The decoder's synchronous read (READ_READY): events already decoded from a chunk come out without a
// promise, in the same order as next() gives them, and a failure found in the chunk is still thrown by
// next() after the events before it. The reflector drains a chunk this way.

import { describe, expect, it } from 'vitest';
import { decodeWatchStream } from '../../src/listwatch/decoder.js';
import { READ_READY, type ReadyIterator } from '../../src/listwatch/types.js';
import { WatchDecodeError, type WatchEvent } from '../../src/listwatch/index.js';
import { eventLine, pod } from './helpers.js';

async function* parts(...chunks: string[]): AsyncGenerator<Buffer> {
  for (const c of chunks) yield Buffer.from(c);
}

/** The decoder over these chunks, seen with its synchronous read. */
const ready = (source: AsyncIterable<Buffer>): ReadyIterator<unknown> => decodeWatchStream(source) as unknown as ReadyIterator<unknown>;

const nameOf = (e: WatchEvent<unknown> | undefined): string | undefined => (e?.object as { metadata?: { name?: string } } | undefined)?.metadata?.name;

describe('decodeWatchStream: events at hand without a promise', () => {
  it('hands out the rest of a chunk synchronously, then nothing until next() reads more', async () => {
    const it = ready(parts(eventLine('ADDED', pod('a', '1')) + eventLine('ADDED', pod('b', '2')) + eventLine('ADDED', pod('c', '3')), eventLine('ADDED', pod('d', '4'))));
    expect(it[READ_READY]()).toBeUndefined(); // nothing read yet
    const first = await it.next();
    expect(nameOf(first.value as WatchEvent<unknown>)).toBe('a');
    expect([nameOf(it[READ_READY]()), nameOf(it[READ_READY]())]).toEqual(['b', 'c']);
    expect(it[READ_READY]()).toBeUndefined();
    expect(nameOf((await it.next()).value as WatchEvent<unknown>)).toBe('d');
    expect(it[READ_READY]()).toBeUndefined();
    expect((await it.next()).done).toBe(true);
  });

  it('a bad line after good ones: the good ones first, then next() throws', async () => {
    const it = ready(parts(eventLine('ADDED', pod('a', '1')) + eventLine('ADDED', pod('b', '2')) + 'not json\n'));
    expect(nameOf((await it.next()).value as WatchEvent<unknown>)).toBe('a');
    expect(nameOf(it[READ_READY]())).toBe('b');
    expect(it[READ_READY]()).toBeUndefined();
    await expect(it.next()).rejects.toBeInstanceOf(WatchDecodeError);
  });

  it('after return() nothing is at hand', async () => {
    const it = ready(parts(eventLine('ADDED', pod('a', '1')) + eventLine('ADDED', pod('b', '2'))));
    await it.next();
    await it.return!();
    expect(it[READ_READY]()).toBeUndefined();
  });
});
