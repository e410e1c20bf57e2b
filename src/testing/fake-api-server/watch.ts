// One open watch of the fake API server: event lines, batching, backpressure, bookmarks, timeouts, faults.

import type { ServerResponse } from 'node:http';
import type { Clock, ClockTimer } from '../../core/clock.js';
import type { ResourceState, StateChange, StoredEntry } from '../resource-state.js';
import { asLeft, eventTypeFor } from '../selectors.js';
import type { StreamFault } from './faults.js';
import { partialContentType, waitDrain } from './http-util.js';
import type { ResourceInfo } from './paths.js';

const CHUNK_CHARS = 256 * 1024;

/** How a {@link WatchConnection} behaves. */
export interface WatchConnectionOptions {
  /** The watched resource. */
  ri: ResourceInfo;
  /** The shared state. */
  state: ResourceState;
  /** The clock for `timeoutSeconds` and periodic bookmarks. */
  clock: Clock;
  /** Only objects in this namespace. */
  namespace?: string;
  /** Only the object with this name (a watch on a single-object path). */
  name?: string;
  /** Label/field selector filter. */
  matcher?: (entry: StoredEntry) => boolean;
  /** Send PartialObjectMetadata objects. */
  metadataOnly: boolean;
  /** The client sent `allowWatchBookmarks=true`. */
  allowBookmarks: boolean;
  /** Close the stream after this long (`timeoutSeconds`). */
  timeoutMs?: number;
  /** Send a bookmark this often (when bookmarks are allowed). */
  bookmarkIntervalMs?: number;
  /** Scripted stream faults, in `afterEvents` order. */
  steps: StreamFault[];
  /** The resourceVersion the watch starts from (for the default of a regressed event). */
  startRv: number;
  /** Called once when the connection is finished, whatever the reason. */
  onClose: (conn: WatchConnection) => void;
}

/** What a watch sends first. */
export interface WatchPlan {
  /** Synthetic ADDED events for these entries (a watch from `""`/`"0"`, or initial events). */
  initial?: StoredEntry[];
  /** After `initial`, a BOOKMARK annotated `k8s.io/initial-events-end: "true"`. */
  initialEnd?: boolean;
  /** Remembered changes to replay (a watch from a resourceVersion). */
  replay?: StateChange[];
  /** Send this Status as an ERROR event and end (e.g. 410 too old resource version). */
  error?: Record<string, unknown>;
}

/**
 * One watch response: newline-delimited JSON events over a chunked HTTP body. Lines produced in the
 * same tick are written as one chunk; when the socket buffer is full, lines queue until 'drain'.
 */
export class WatchConnection {
  #res: ServerResponse;
  #o: WatchConnectionOptions;
  #pending: string[] = [];
  #pendingHead = 0;
  #scheduled = false;
  #waiting = false;
  #ending = false;
  #finished = false;
  #events = 0;
  #lastLine: string | undefined;
  #lastEntry: StoredEntry | undefined;
  #lastRv: number;
  #unsubscribe: (() => void) | undefined;
  #timeout: ClockTimer | undefined;
  #bookmarkTimer: ClockTimer | undefined;

  constructor(res: ServerResponse, options: WatchConnectionOptions) {
    this.#res = res;
    this.#o = options;
    this.#lastRv = options.startRv;
    res.on('close', () => this.#cleanup());
  }

  /** The state key of the resource watched. */
  get stateKey(): string {
    return this.#o.ri.stateKey;
  }

  /** Events sent so far (any type). */
  get eventsSent(): number {
    return this.#events;
  }

  /** Sends the headers and what `plan` says, then streams live changes. */
  start(plan: WatchPlan): void {
    const o = this.#o;
    this.#res.writeHead(200, {
      'Content-Type': o.metadataOnly ? partialContentType() : 'application/json',
      'Cache-Control': 'no-cache, private',
      'Transfer-Encoding': 'chunked',
    });
    this.#res.flushHeaders();
    this.#runSteps();
    if (plan.error !== undefined) {
      this.#send(`{"type":"ERROR","object":${JSON.stringify(plan.error)}}\n`);
      this.end();
      return;
    }
    for (const e of plan.initial ?? []) if (this.#accepts(e)) this.#emit('ADDED', e);
    if (plan.initialEnd) this.bookmark(true);
    for (const c of plan.replay ?? []) this.#onChange(c);
    if (this.#ending) return;
    this.#unsubscribe = o.state.subscribe(o.ri.stateKey, (c) => this.#onChange(c));
    if (o.timeoutMs !== undefined) this.#timeout = o.clock.setTimeout(() => this.end(), o.timeoutMs);
    this.#scheduleBookmark();
  }

  /** Sends a BOOKMARK at the current resourceVersion, if the client allowed bookmarks. */
  bookmark(initialEventsEnd = false): void {
    if (!this.#o.allowBookmarks || this.#ending) return;
    const rv = String(this.#o.state.currentResourceVersion());
    const meta = initialEventsEnd
      ? `{"resourceVersion":"${rv}","annotations":{"k8s.io/initial-events-end":"true"}}`
      : `{"resourceVersion":"${rv}"}`;
    const head = this.#o.metadataOnly
      ? '{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata",'
      : this.#o.ri.jsonPrefix;
    this.#count(`{"type":"BOOKMARK","object":${head}"metadata":${meta}}}\n`);
  }

  /** Ends the stream cleanly once everything queued is written (like a server-side timeout). */
  end(): void {
    if (this.#ending) return;
    this.#ending = true;
    this.#stopLive();
    if (!this.#scheduled && !this.#waiting) this.#finish();
  }

  /** Drops the connection at once (socket destroyed, no clean end). */
  destroy(): void {
    this.#ending = true;
    this.#stopLive();
    this.#res.socket?.destroy();
    this.#res.destroy();
    this.#cleanup();
  }

  #accepts(e: StoredEntry): boolean {
    if (this.#o.namespace !== undefined && e.namespace !== this.#o.namespace) return false;
    if (this.#o.name !== undefined && e.name !== this.#o.name) return false;
    return true;
  }

  #onChange(c: StateChange): void {
    if (this.#ending || !this.#accepts(c.entry)) return;
    const type = eventTypeFor(c.type, c.entry, c.prev, this.#o.matcher);
    if (type === 'DELETED' && c.type === 'MODIFIED' && c.prev !== undefined) this.#emit(type, asLeft(c.prev, c.entry));
    else if (type !== undefined) this.#emit(type, c.entry);
  }

  #objectJson(e: StoredEntry): string {
    return this.#o.metadataOnly
      ? `{"apiVersion":"meta.k8s.io/v1","kind":"PartialObjectMetadata","metadata":${JSON.stringify(e.meta)}}`
      : e.json;
  }

  #emit(type: string, e: StoredEntry): void {
    this.#lastEntry = e;
    this.#lastRv = e.rv;
    this.#count(`{"type":"${type}","object":${this.#objectJson(e)}}\n`);
  }

  #count(line: string): void {
    if (this.#ending) return;
    this.#lastLine = line;
    this.#events++;
    this.#send(line);
    this.#runSteps();
  }

  #runSteps(): void {
    const steps = this.#o.steps;
    while (!this.#ending && steps.length > 0 && (steps[0].afterEvents ?? 0) <= this.#events) {
      this.#apply(steps.shift() as StreamFault);
    }
  }

  #apply(step: StreamFault): void {
    switch (step.type) {
      case 'endWatch':
        if (step.abrupt) {
          this.#ending = true;
          this.#stopLive();
          this.#afterFlush = () => this.#dropAfterWrites();
          if (!this.#scheduled && !this.#waiting) this.#dropAfterWrites();
        } else this.end();
        return;
      case 'malformedLine':
        this.#send(`${step.line ?? '{"type":"MODIFIED","object":{"apiVersion":"v1","metadata":{"name":'}\n`);
        return;
      case 'duplicateEvent':
        if (this.#lastLine !== undefined) this.#send(this.#lastLine);
        return;
      case 'notAnEvent':
        this.#send(`${step.line ?? '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"not-a-watch-event"}}'}\n`);
        return;
      case 'unknownEventType': {
        const obj = this.#lastEntry !== undefined ? this.#objectJson(this.#lastEntry) : `${this.#o.ri.jsonPrefix}"metadata":{}}`;
        this.#send(`{"type":${JSON.stringify(step.eventType ?? 'SURPRISE')},"object":${obj}}\n`);
        return;
      }
      case 'regressedEvent': {
        const base: unknown =
          step.object ??
          (this.#lastEntry !== undefined
            ? (JSON.parse(this.#lastEntry.json) as unknown)
            : { apiVersion: this.#o.ri.apiVersion, kind: this.#o.ri.kind, metadata: { name: 'regressed', namespace: this.#o.namespace } });
        const obj = structuredClone(base) as { metadata?: Record<string, unknown> };
        obj.metadata = { ...(obj.metadata ?? {}), resourceVersion: step.resourceVersion ?? String(Math.max(1, this.#lastRv - 1)) };
        const json = this.#o.metadataOnly
          ? JSON.stringify({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadata', metadata: obj.metadata })
          : JSON.stringify(obj);
        this.#send(`{"type":"${step.eventType ?? 'DELETED'}","object":${json}}\n`);
        return;
      }
    }
  }

  #afterFlush: (() => void) | undefined;

  #send(line: string): void {
    if (this.#finished) return;
    this.#pending.push(line);
    if (!this.#scheduled && !this.#waiting) {
      this.#scheduled = true;
      queueMicrotask(() => this.#flush());
    }
  }

  #flush(): void {
    this.#scheduled = false;
    if (this.#finished) return;
    const lines = this.#pending;
    let i = this.#pendingHead;
    while (i < lines.length) {
      const start = i;
      let size = 0;
      while (i < lines.length && size < CHUNK_CHARS) size += lines[i++].length;
      const chunk = start === 0 && i === lines.length ? lines.join('') : lines.slice(start, i).join('');
      if (!this.#res.write(chunk)) {
        if (i > 4096 && i * 2 > lines.length) {
          this.#pending = lines.slice(i); // amortized: drop what is written once it is most of the array
          this.#pendingHead = 0;
        } else this.#pendingHead = i;
        this.#waiting = true;
        void waitDrain(this.#res).then((ok) => {
          this.#waiting = false;
          if (ok) this.#flush();
        });
        return;
      }
    }
    this.#pending = [];
    this.#pendingHead = 0;
    if (this.#ending) this.#finish();
  }

  #finish(): void {
    if (this.#afterFlush !== undefined) {
      this.#afterFlush();
      return;
    }
    if (!this.#res.writableEnded && !this.#res.destroyed) this.#res.end();
    this.#cleanup();
  }

  /** Closes the TCP connection once written data is out, without ending the chunked body. */
  #dropAfterWrites(): void {
    const socket = this.#res.socket;
    if (socket === null || socket.destroyed) this.destroy();
    else {
      socket.end();
      this.#cleanup();
    }
  }

  #scheduleBookmark(): void {
    const every = this.#o.bookmarkIntervalMs;
    if (!this.#o.allowBookmarks || every === undefined || every <= 0 || this.#ending) return;
    this.#bookmarkTimer = this.#o.clock.setTimeout(() => {
      this.#bookmarkTimer = undefined;
      this.bookmark();
      this.#scheduleBookmark();
    }, every);
  }

  #stopLive(): void {
    this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    if (this.#timeout !== undefined) this.#o.clock.clearTimeout(this.#timeout);
    if (this.#bookmarkTimer !== undefined) this.#o.clock.clearTimeout(this.#bookmarkTimer);
    this.#timeout = undefined;
    this.#bookmarkTimer = undefined;
  }

  #cleanup(): void {
    if (this.#finished) return;
    this.#finished = true;
    this.#ending = true;
    this.#pending = [];
    this.#pendingHead = 0;
    this.#stopLive();
    this.#o.onClose(this);
  }
}
