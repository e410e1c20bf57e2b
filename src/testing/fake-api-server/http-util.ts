// HTTP helpers of the fake API server: Status answers, JSON bodies, backpressure-aware writes.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiStatusError } from '../../core/errors.js';
import { statusBody } from '../status.js';

export { REASONS, statusBody } from '../status.js';

/** Sends a JSON body (already serialized) with `code`. */
export function sendJson(
  res: ServerResponse,
  code: number,
  json: string,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Content-Length': Buffer.byteLength(json),
    'Cache-Control': 'no-cache, private',
    ...headers,
  });
  res.end(json);
}

/** The plain-text body kube-apiserver answers (404, `text/plain`) for a path under an API group it does not serve. */
export const PAGE_NOT_FOUND = '404 page not found\n';

/**
 * Sends an error as a Status body: an {@link ApiStatusError} keeps its Status (a 404 without one whose
 * message is `404 page not found` is sent as that plain text), anything else is a 500.
 */
export function sendError(res: ServerResponse, err: unknown): void {
  if (err instanceof ApiStatusError && err.status === undefined && err.statusCode === 404 && err.message === PAGE_NOT_FOUND.trim()) {
    // kube-apiserver's fallback for a path no API group serves: plain text, not a Status.
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8', 'X-Content-Type-Options': 'nosniff', 'Content-Length': Buffer.byteLength(PAGE_NOT_FOUND) });
    res.end(PAGE_NOT_FOUND);
    return;
  }
  if (err instanceof ApiStatusError) {
    const body = (err.status as Record<string, unknown> | undefined) ?? statusBody(err.statusCode, err.message, err.reason);
    const headers: Record<string, string> =
      err.retryAfterSeconds !== undefined ? { 'Retry-After': String(err.retryAfterSeconds) } : {};
    sendJson(res, err.statusCode, JSON.stringify(body), headers);
    return;
  }
  const message = err instanceof Error ? err.message : String(err);
  sendJson(res, 500, JSON.stringify(statusBody(500, `fake API server failure: ${message}`)));
}

/** Reads a whole request body as text. */
export async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** Parses a JSON request body; a 400 {@link ApiStatusError} when it is not JSON. */
export function parseJsonBody(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw new ApiStatusError(400, `the request body is not valid JSON: ${(e as Error).message}`, {
      reason: 'BadRequest',
      status: statusBody(400, `the request body is not valid JSON: ${(e as Error).message}`),
    });
  }
}

/**
 * Resolves when `res` can take more data ('drain'), or `false` as soon as the connection is gone, so
 * a writer never waits forever on a client that went away.
 */
export function waitDrain(res: ServerResponse): Promise<boolean> {
  if (res.destroyed || res.writableEnded) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean): void => {
      res.off('drain', onDrain);
      res.off('close', onClose);
      resolve(ok);
    };
    const onDrain = (): void => done(true);
    const onClose = (): void => done(false);
    res.on('drain', onDrain);
    res.on('close', onClose);
  });
}

/**
 * Writes `parts` to `res` in chunks of about `chunkBytes` characters, waiting for 'drain' whenever the
 * socket buffer is full. Resolves `false` when the connection closed before everything was written.
 */
export async function writeParts(res: ServerResponse, parts: Iterable<string>, chunkBytes = 256 * 1024): Promise<boolean> {
  let buf: string[] = [];
  let size = 0;
  const flush = async (): Promise<boolean> => {
    if (buf.length === 0) return true;
    const chunk = buf.join('');
    buf = [];
    size = 0;
    if (res.destroyed) return false;
    if (!res.write(chunk)) return waitDrain(res);
    return true;
  };
  for (const part of parts) {
    buf.push(part);
    size += part.length;
    if (size >= chunkBytes && !(await flush())) return false;
  }
  return flush();
}

/** Parses the `Accept` header: whether the client asked for metadata-only objects. */
export function wantsPartialMetadata(accept: string | undefined): boolean {
  if (accept === undefined) return false;
  const first = accept.split(',')[0].toLowerCase();
  return /;\s*as=partialobjectmetadata(list)?\b/.test(first) && /;\s*g=meta\.k8s\.io\b/.test(first);
}

/**
 * The Content-Type of a metadata-only answer (a list, a watch, one object): kube-apiserver v1.37 names
 * the plain media type, `application/json`, whatever `as=` the Accept asked for — the body's `kind`
 * (`PartialObjectMetadataList`, `PartialObjectMetadata`) says the rest (checked against it in
 * test/apiserver/cache-options.test.ts).
 */
export function partialContentType(): string {
  return 'application/json';
}
