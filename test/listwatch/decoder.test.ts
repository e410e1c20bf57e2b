import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/index.js';
import { NetworkError, WatchDecodeError, decodeWatchStream, type WatchEvent } from '../../src/listwatch/index.js';
import { collect, eventLine, pod } from './helpers.js';
import { seededRandom as prng } from '../../src/testing/random.js';

function body(count: number): string {
  let text = '';
  for (let i = 0; i < count; i++) text += eventLine(i % 2 === 0 ? 'ADDED' : 'MODIFIED', pod(`p${i}`, String(i + 1)));
  return text;
}

function chunksOf(buf: Buffer, size: number): Buffer[] {
  const out: Buffer[] = [];
  for (let i = 0; i < buf.length; i += size) out.push(buf.subarray(i, i + size));
  return out;
}

function names(events: Array<WatchEvent<unknown>>): string[] {
  return events.map((e) => `${e.type}:${(e.object as { metadata: { name: string } }).metadata.name}`);
}

async function decodeError(parts: Array<Buffer | string>): Promise<{ events: string[]; error: unknown }> {
  const events: Array<WatchEvent<unknown>> = [];
  try {
    for await (const ev of decodeWatchStream(Readable.from(parts))) events.push(ev);
  } catch (error) {
    return { events: names(events), error };
  }
  return { events: names(events), error: undefined };
}

describe('decodeWatchStream', () => {
  it('decodes a body fed one byte at a time', async () => {
    const buf = Buffer.from(body(5));
    const events = await collect(decodeWatchStream(Readable.from(chunksOf(buf, 1))));
    expect(names(events)).toEqual(['ADDED:p0', 'MODIFIED:p1', 'ADDED:p2', 'MODIFIED:p3', 'ADDED:p4']);
  });

  it('decodes the same events whatever byte the body is split at', async () => {
    const buf = Buffer.from(body(3) + eventLine('ADDED', pod('ü-ñ-名', '9')));
    const expected = names(await collect(decodeWatchStream(Readable.from([buf]))));
    expect(expected).toHaveLength(4);
    for (let cut = 1; cut < buf.length; cut++) {
      const events = await collect(decodeWatchStream(Readable.from([buf.subarray(0, cut), buf.subarray(cut)])));
      expect(names(events), `split at byte ${cut}`).toEqual(expected);
    }
  });

  it('decodes many events that share one chunk, in order', async () => {
    const events = await collect(decodeWatchStream(Readable.from([Buffer.from(body(500))])));
    expect(events).toHaveLength(500);
    expect(names(events).slice(0, 2)).toEqual(['ADDED:p0', 'MODIFIED:p1']);
    expect(names(events)[499]).toBe('MODIFIED:p499');
  });

  it('accepts string and Uint8Array chunks', async () => {
    const text = body(2);
    const u8 = new Uint8Array(Buffer.from(text.slice(10)));
    async function* parts(): AsyncGenerator<Uint8Array | string> {
      yield text.slice(0, 10);
      yield u8;
    }
    const events = await collect(decodeWatchStream(parts()));
    expect(names(events)).toEqual(['ADDED:p0', 'MODIFIED:p1']);
  });

  it('skips blank lines and CRLF line endings', async () => {
    const text = `\n${eventLine('ADDED', pod('a', '1')).replace('\n', '\r\n')}  \n\n${eventLine('DELETED', pod('a', '2'))}`;
    const events = await collect(decodeWatchStream(Readable.from([Buffer.from(text)])));
    expect(names(events)).toEqual(['ADDED:a', 'DELETED:a']);
  });

  it('passes BOOKMARK and ERROR events through unchanged', async () => {
    const status = { kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' };
    const text = eventLine('BOOKMARK', { metadata: { resourceVersion: '12' } }) + eventLine('ERROR', status);
    const events = await collect(decodeWatchStream(Readable.from([Buffer.from(text)])));
    expect(events).toEqual([
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '12' } } },
      { type: 'ERROR', object: status },
    ]);
  });

  it('accepts a complete last event that has no trailing newline', async () => {
    const text = body(1) + JSON.stringify({ type: 'DELETED', object: pod('p0', '5') });
    const { events, error } = await decodeError([text]);
    expect(error).toBeUndefined();
    expect(events).toEqual(['ADDED:p0', 'DELETED:p0']);
  });

  it('throws WatchDecodeError after the good events when a line is not JSON', async () => {
    const { events, error } = await decodeError([body(2) + '{"type":"ADDED", oops\n' + body(1)]);
    expect(events).toEqual(['ADDED:p0', 'MODIFIED:p1']);
    expect(error).toBeInstanceOf(WatchDecodeError);
    expect((error as WatchDecodeError).code).toBe(ErrorCodes.WATCH_DECODE);
    expect((error as WatchDecodeError).failure).toBe('malformed-json');
    expect((error as WatchDecodeError).preview).toBe('{"type":"ADDED", oops');
    expect((error as Error).cause).toBeInstanceOf(SyntaxError);
  });

  it.each([
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"ADDED"'],
    ['an object without type', '{"object":{}}'],
    ['a numeric type', '{"type":1,"object":{}}'],
    ['an object field that is null', '{"type":"ADDED","object":null}'],
    ['an object field that is an array', '{"type":"ADDED","object":[]}'],
  ])('throws WatchDecodeError (not-an-event) for %s', async (_what, line) => {
    const { events, error } = await decodeError([body(1), `${line}\n`]);
    expect(events).toEqual(['ADDED:p0']);
    expect(error).toBeInstanceOf(WatchDecodeError);
    expect((error as WatchDecodeError).failure).toBe('not-an-event');
    expect((error as WatchDecodeError).preview).toBe(line);
  });

  it('throws WatchDecodeError (unknown-type) for an unknown event type', async () => {
    const { error } = await decodeError([eventLine('RENAMED', pod('a', '1'))]);
    expect(error).toBeInstanceOf(WatchDecodeError);
    expect((error as WatchDecodeError).failure).toBe('unknown-type');
    expect((error as Error).message).toContain('"RENAMED"');
  });

  it('throws WatchDecodeError (truncated) when the body ends in the middle of a line', async () => {
    const line = eventLine('ADDED', pod('b', '2'));
    const { events, error } = await decodeError([body(1), line.slice(0, 20)]);
    expect(events).toEqual(['ADDED:p0']);
    expect(error).toBeInstanceOf(WatchDecodeError);
    expect((error as WatchDecodeError).failure).toBe('truncated');
  });

  it('bounds the preview of a huge bad line', async () => {
    const { error } = await decodeError([`${'x'.repeat(100_000)}\n`]);
    expect((error as WatchDecodeError).preview.length).toBeLessThanOrEqual(200);
    expect((error as Error).message.length).toBeLessThan(400);
  });

  it('turns a source that fails into a NetworkError carrying the original', async () => {
    const cause = Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
    async function* failing(): AsyncGenerator<Buffer> {
      yield Buffer.from(body(1));
      throw cause;
    }
    const { events, error } = await decodeError(failing() as unknown as Buffer[]);
    expect(events).toEqual(['ADDED:p0']);
    expect(error).toBeInstanceOf(NetworkError);
    expect((error as NetworkError).syscallCode).toBe('ECONNRESET');
    expect((error as Error).cause).toBe(cause);
  });

  it('destroys the source when the consumer leaves early', async () => {
    const source = Readable.from([Buffer.from(body(3))]);
    for await (const ev of decodeWatchStream(source)) {
      expect(ev.type).toBe('ADDED');
      break;
    }
    expect(source.destroyed).toBe(true);
  });

  it('ends a read that is pending when return() is called, and destroys the source', async () => {
    const source = new Readable({ read() {} });
    const it = decodeWatchStream(source);
    const pending = it.next();
    await it.return?.();
    await expect(pending).resolves.toEqual({ value: undefined, done: true });
    expect(source.destroyed).toBe(true);
  });

  it('ends quietly when the signal aborts while a read is pending', async () => {
    const source = new Readable({ read() {} });
    source.push(Buffer.from(body(1)));
    const controller = new AbortController();
    const it = decodeWatchStream(source, { signal: controller.signal });
    expect((await it.next()).done).toBe(false);
    const pending = it.next();
    controller.abort();
    await expect(pending).resolves.toEqual({ value: undefined, done: true });
    expect(source.destroyed).toBe(true);
    expect(await it.next()).toEqual({ value: undefined, done: true });
  });

  it('ends at once when the signal is already aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    const events = await collect(decodeWatchStream(Readable.from([Buffer.from(body(2))]), { signal: controller.signal }));
    expect(events).toEqual([]);
  });
});


describe('decodeWatchStream, randomized against a model', () => {
  it('yields exactly the model events, then the error of the first bad line, for random splits', async () => {
    const seed = Number(process.env.DECODER_SEED ?? Date.now() % 1_000_000);
    const rand = prng(seed);
    const types = ['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK', 'ERROR'];
    const badLines = ['{"type":"ADDED"', '[]', '{"type":"NOPE","object":{}}', '{"object":{}}'];
    try {
      for (let round = 0; round < 400; round++) {
        const model: string[] = [];
        let text = '';
        let broken = false;
        const count = Math.floor(rand() * 12);
        for (let i = 0; i < count && !broken; i++) {
          if (rand() < 0.05) {
            text += `${badLines[Math.floor(rand() * badLines.length)]}\n`;
            broken = true;
            break;
          }
          if (rand() < 0.1) text += rand() < 0.5 ? '\n' : '  \r\n';
          const type = types[Math.floor(rand() * types.length)];
          const name = `p${i}-${'é名x'.repeat(Math.floor(rand() * 4))}`;
          text += eventLine(type, { metadata: { name, resourceVersion: String(i) }, pad: 'z'.repeat(Math.floor(rand() * 300)) });
          model.push(`${type}:${name}`);
        }
        const buf = Buffer.from(text);
        const parts: Buffer[] = [];
        for (let at = 0; at < buf.length; ) {
          const size = 1 + Math.floor(rand() * (rand() < 0.5 ? 8 : 700));
          parts.push(buf.subarray(at, at + size));
          at += size;
        }
        const { events, error } = await decodeError(parts);
        expect(events, `round ${round}`).toEqual(model);
        if (broken) expect(error, `round ${round}`).toBeInstanceOf(WatchDecodeError);
        else expect(error, `round ${round}`).toBeUndefined();
      }
    } catch (err) {
      console.error(`decoder model test failed with DECODER_SEED=${seed}`);
      throw err;
    }
  });
});
