// The chunk source's read(): next() without its promise. A Node stream hands each chunk to the reader
// inside its own `data` event, so a watch with one event per chunk pays no promise per chunk (issue 29);
// what read() can answer at once still goes through a promise, so the reader is never called back from
// inside its own call to read() or close().

import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { chunkSource, type Chunk } from '../../src/listwatch/chunk-source.js';

/** The results one read() delivered, and whether any came while read() itself ran. */
function reader(): { got: Array<IteratorResult<Chunk> | { error: unknown }>; inside: boolean; read: (source: ReturnType<typeof chunkSource>) => void } {
  const state = {
    got: [] as Array<IteratorResult<Chunk> | { error: unknown }>,
    inside: false,
    read(source: ReturnType<typeof chunkSource>): void {
      let reading = true;
      source.read(
        (r) => {
          if (reading) state.inside = true;
          state.got.push(r);
        },
        (error) => {
          if (reading) state.inside = true;
          state.got.push({ error });
        },
      );
      reading = false;
    },
  };
  return state;
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A stream the test pushes into, and its chunk source, once the stream flows. */
async function flowing(): Promise<{ stream: Readable; source: ReturnType<typeof chunkSource> }> {
  const stream = new Readable({ read() {} });
  const source = chunkSource(stream);
  await tick();
  return { stream, source };
}

describe('chunkSource(...).read() on a Node stream', () => {
  it('hands a chunk over inside the stream’s data event, not through a promise', async () => {
    const { stream, source } = await flowing();
    const r = reader();
    r.read(source);
    stream.push(Buffer.from('a\n'));
    // Delivered before push() returned: no microtask in between.
    expect(r.got).toEqual([{ value: Buffer.from('a\n'), done: false }]);
    expect(r.inside).toBe(false);
    source.close();
  });

  it('answers a chunk already queued through a promise, never inside read()', async () => {
    const stream = new Readable({ read() {} });
    const source = chunkSource(stream);
    stream.push('x');
    stream.push('y');
    await tick();
    const r = reader();
    r.read(source);
    expect(r.got).toEqual([]);
    await Promise.resolve();
    expect(r.got).toEqual([{ value: Buffer.from('x'), done: false }]);
    expect(r.inside).toBe(false);
    source.close();
  });

  it('tells the end, and a failure after the chunks that came before it', async () => {
    const { stream: ended, source: a } = await flowing();
    const r1 = reader();
    r1.read(a);
    ended.push(null);
    await tick();
    expect(r1.got).toEqual([{ value: undefined, done: true }]);

    const { stream: failing, source: b } = await flowing();
    failing.push('before');
    const boom = new Error('reset');
    failing.destroy(boom);
    await tick();
    const r2 = reader();
    r2.read(b);
    await tick();
    const r3 = reader();
    r3.read(b);
    await tick();
    expect(r2.got).toEqual([{ value: Buffer.from('before'), done: false }]);
    expect(r3.got).toEqual([{ error: boom }]);
    expect(r2.inside || r3.inside).toBe(false);
  });

  it('ends a waiting read with done when closed, after close() returned', async () => {
    const { stream, source } = await flowing();
    const r = reader();
    r.read(source);
    source.close();
    expect(r.got).toEqual([]);
    await Promise.resolve();
    expect(r.got).toEqual([{ value: undefined, done: true }]);
    expect(stream.destroyed).toBe(true);
  });
});

describe('chunkSource(...).read() on any other async iterable', () => {
  it('is next() with callbacks', async () => {
    async function* chunks(): AsyncGenerator<Chunk> {
      yield 'one';
      throw new Error('gone');
    }
    const source = chunkSource(chunks());
    const r = reader();
    r.read(source);
    await tick();
    r.read(source);
    await tick();
    expect(r.got).toEqual([{ value: 'one', done: false }, { error: new Error('gone') }]);
    expect(r.inside).toBe(false);
  });
});
