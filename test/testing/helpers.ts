// Helpers for the test-kit tests: read a watch stream line by line over plain fetch, check for leaks.

/** A watch response read one JSON line at a time. */
export interface WatchReader {
  status: number;
  headers: Headers;
  /** The next raw line, or undefined once the stream ended. */
  nextLine(): Promise<string | undefined>;
  /** The next line parsed as JSON, or undefined once the stream ended. */
  next(): Promise<any>;
  /** The next `n` events. */
  take(n: number): Promise<any[]>;
  /** Reads until the stream ends; resolves with every remaining event. */
  rest(): Promise<any[]>;
  /** Aborts the request. */
  close(): void;
}

export async function openWatch(url: string, init: RequestInit = {}): Promise<WatchReader> {
  const ac = new AbortController();
  const res = await fetch(url, { ...init, signal: ac.signal });
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buf = '';
  let lines: string[] = [];
  let head = 0;
  let done = false;
  const nextLine = async (): Promise<string | undefined> => {
    for (;;) {
      if (head < lines.length) return lines[head++];
      if (done) {
        if (buf === '') return undefined;
        const last = buf;
        buf = '';
        return last;
      }
      try {
        const r = await reader.read();
        if (r.done) done = true;
        else {
          const parts = (buf + decoder.decode(r.value, { stream: true })).split('\n');
          buf = parts.pop() as string;
          lines = parts;
          head = 0;
        }
      } catch {
        done = true;
      }
    }
  };
  const next = async (): Promise<any> => {
    const line = await nextLine();
    return line === undefined ? undefined : JSON.parse(line);
  };
  return {
    status: res.status,
    headers: res.headers,
    nextLine,
    next,
    async take(n) {
      const out: any[] = [];
      for (let i = 0; i < n; i++) out.push(await next());
      return out;
    },
    async rest() {
      const out: any[] = [];
      for (let e = await next(); e !== undefined; e = await next()) out.push(e);
      return out;
    },
    close() {
      ac.abort();
    },
  };
}

export async function getJson(url: string, init?: RequestInit): Promise<{ status: number; headers: Headers; body: any }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text === '' ? undefined : JSON.parse(text) };
}

/** Sends `body` (JSON-encoded, as `contentType`) with `method` to `base + path` and reads the answer as {@link getJson} does. */
export function sendJson(base: string, method: string, path: string, body?: unknown, contentType = 'application/json'): Promise<{ status: number; headers: Headers; body: any }> {
  return getJson(`${base}${path}`, { method, headers: { 'Content-Type': contentType }, body: body === undefined ? undefined : JSON.stringify(body) });
}

/** Lets I/O settle: a bounded number of event-loop turns until no TCP handle is open. */
export async function tcpHandlesAfterSettling(turns = 20): Promise<string[]> {
  let open: string[] = [];
  for (let i = 0; i < turns; i++) {
    open = process.getActiveResourcesInfo().filter((r) => r.startsWith('TCP'));
    if (open.length === 0) return open;
    await new Promise<void>((r) => setImmediate(r));
  }
  return open;
}

/** A pod-shaped object. */
export function pod(name: string, namespace = 'default', labels: Record<string, string> = {}, extra: object = {}): any {
  return { metadata: { name, namespace, labels }, spec: { nodeName: 'node-1' }, ...extra };
}
