// The differential suite's wire: plain HTTP requests to one server (fake or real), each answer recorded raw and normalised.

import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { Normaliser, type Normalised } from './normalise.js';

/** One server the scenarios run against. */
export interface Endpoint {
  /** `fake` or `kube-apiserver`. */
  name: string;
  /** Base URL, `http://127.0.0.1:<port>` or `https://127.0.0.1:<port>`. */
  url: string;
  /** Bearer token. */
  token: string;
  /** CA certificate (PEM) for https. */
  ca?: string;
  /** Forgets the history up to now: the fake's `compact()`, etcd's compaction. */
  compact(): Promise<void>;
}

/** A request of a scenario. */
export interface WireRequest {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** A JSON body (serialised here) or a string sent as is. */
  body?: unknown;
  /** Default `application/json` when there is a body. */
  contentType?: string;
}

/** An answer, as the scenario sees it (raw, to take continue tokens and resource versions from). */
export interface WireAnswer {
  status: number;
  contentType: string;
  /** The parsed JSON body, or the text when it is not JSON. */
  body: any;  
}

/** One compared request: its key, what was sent and the normalised answer. */
export interface Exchange {
  key: string;
  request: string;
  answer: Normalised;
}

/** Binds the scenarios to one endpoint and records every compared exchange in order. */
export class Wire {
  readonly endpoint: Endpoint;
  readonly transcript: Exchange[] = [];
  readonly normaliser = new Normaliser();
  #agent: HttpAgent | HttpsAgent;
  #scenario = '';
  #labels = new Map<string, number>();

  constructor(endpoint: Endpoint) {
    this.endpoint = endpoint;
    this.#agent = endpoint.url.startsWith('https:') ? new HttpsAgent({ keepAlive: true, ca: endpoint.ca }) : new HttpAgent({ keepAlive: true });
  }

  /** Starts a scenario: later keys are `<scenario> › <label>`. */
  scenario(name: string): void {
    this.#scenario = name;
    this.#labels.clear();
  }

  /** Sends a request, records its normalised answer under `label`, and returns the raw answer. */
  async req(label: string, r: WireRequest): Promise<WireAnswer> {
    const answer = await this.raw(r);
    const seen = (this.#labels.get(label) ?? 0) + 1;
    this.#labels.set(label, seen);
    const key = `${this.#scenario} › ${label}${seen > 1 ? ` #${seen}` : ''}`;
    this.transcript.push({ key, request: describe(r), answer: this.normaliser.answer(answer) });
    return answer;
  }

  /** Sends a request without recording it (set-up, polling). */
  async raw(r: WireRequest): Promise<WireAnswer> {
    const res = await this.#send(r);
    const text = await readAll(res);
    return { status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body: parse(text) };
  }

  /**
   * Opens a watch, records the first `count` events (or what came within `maxMs`) as one exchange,
   * then closes it. The HTTP status and content type are part of the record.
   */
  async watch(label: string, r: WireRequest, count: number, maxMs = 5_000): Promise<WireAnswer> {
    const res = await this.#send({ ...r, query: { ...r.query, watch: 'true' } });
    const events: unknown[] = [];
    let buffered = '';
    let body: unknown = events;
    res.setEncoding('utf8');
    await new Promise<void>((resolve) => {
      const timer = setTimeout(finish, maxMs);
      function finish(): void {
        clearTimeout(timer);
        res.destroy();
        resolve();
      }
      res.on('data', (chunk: string) => {
        buffered += chunk;
        const lines = buffered.split('\n');
        buffered = lines.pop() ?? '';
        for (const line of lines) if (line.trim() !== '') events.push(parse(line));
        if (events.length >= count) finish();
      });
      res.on('end', () => {
        if (buffered.trim() !== '') events.push(parse(buffered));
        // An error answer is one Status, whether or not the server ended it with a newline.
        if ((res.statusCode ?? 0) >= 300 && events.length === 1) body = events[0];
        finish();
      });
      res.on('error', finish);
    });
    const answer: WireAnswer = { status: res.statusCode ?? 0, contentType: String(res.headers['content-type'] ?? ''), body };
    this.transcript.push({ key: `${this.#scenario} › ${label}`, request: describe({ ...r, query: { ...r.query, watch: 'true' } }), answer: this.normaliser.answer(answer) });
    return answer;
  }

  /** Polls `r` (unrecorded) until `done` holds, up to `maxMs`; returns the last answer. */
  async until(r: WireRequest, done: (a: WireAnswer) => boolean, maxMs = 30_000): Promise<WireAnswer> {
    const deadline = Date.now() + maxMs;
    for (;;) {
      const a = await this.raw(r);
      if (done(a) || Date.now() > deadline) return a;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** Releases the keep-alive sockets. */
  close(): void {
    this.#agent.destroy();
  }

  #send(r: WireRequest): Promise<IncomingMessage> {
    const url = new URL(r.path, this.endpoint.url);
    for (const [k, v] of Object.entries(r.query ?? {})) if (v !== undefined) url.searchParams.set(k, String(v));
    const body = r.body === undefined ? undefined : typeof r.body === 'string' ? r.body : JSON.stringify(r.body);
    const headers: Record<string, string> = { authorization: `Bearer ${this.endpoint.token}`, accept: 'application/json' };
    if (body !== undefined) {
      headers['content-type'] = r.contentType ?? 'application/json';
      headers['content-length'] = String(Buffer.byteLength(body)); // a DELETE body is not chunked by Node: without a length it would run into the next request
    }
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, { method: r.method ?? 'GET', headers, agent: this.#agent }, resolve);
      req.on('error', reject);
      req.end(body);
    });
  }
}

function describe(r: WireRequest): string {
  const q = new URLSearchParams(Object.entries(r.query ?? {}).flatMap(([k, v]): Array<[string, string]> => (v === undefined ? [] : [[k, String(v)]]))).toString();
  return `${r.method ?? 'GET'} ${r.path}${q === '' ? '' : `?${q}`}${r.contentType !== undefined ? ` (${r.contentType})` : ''}`;
}

async function readAll(res: IncomingMessage): Promise<string> {
  res.setEncoding('utf8');
  let text = '';
  for await (const chunk of res) text += chunk as string;
  return text;
}

function parse(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
