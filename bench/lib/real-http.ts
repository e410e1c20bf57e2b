// Plain HTTPS to the server of a kubeconfig (CA, client certificate or bearer token, as the kubeconfig says), for the benchmark's own requests.
//
// Used by the real-apiserver writer (bench/lib/real-writer.ts) and by the raw baseline contender
// when it is given a kubeconfig: neither goes through a Kubernetes client library.

import http from 'node:http';
import https from 'node:https';
import { loadKubeConfig } from '../../src/listwatch/in-cluster.js';

/** The server URL and the request options (TLS material, auth headers) of a kubeconfig's current context. */
export interface ServerAccess {
  /** `https://host:port`, no trailing slash. */
  server: string;
  /** Options to spread into every `https.request` (ca, cert, key, headers with Authorization). */
  options: https.RequestOptions;
}

/** Reads `path` (a kubeconfig file) and resolves with its current context's server and request options. */
export async function serverAccess(path: string): Promise<ServerAccess> {
  // Lean: the raw baseline does not load @kubernetes/client-node (0.5 s, 70 MiB) to read a kubeconfig.
  const kc = loadKubeConfig({ kubeconfig: path, lean: true });
  const cluster = kc.getCurrentCluster();
  if (cluster === null) throw new Error(`${path}: no current cluster`);
  const options: https.RequestOptions = {};
  await kc.applyToHTTPSOptions(options);
  return { server: cluster.server.replace(/\/+$/, ''), options };
}

/** A finished response: status and the whole body. */
export interface Reply {
  status: number;
  body: Buffer;
}

/** Sends one request and reads the whole response. `agent` pools the connections. */
export function send(access: ServerAccess, agent: http.Agent, method: string, path: string, body?: unknown, contentType = 'application/json', accept = 'application/json'): Promise<Reply> {
  const payload = body === undefined ? undefined : Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
  return new Promise((resolve, reject) => {
    // The User-Agent names the field manager of the writes (the server's managedFields entries).
    const headers: Record<string, string | number> = { 'User-Agent': 'kube-informer-bench', ...(access.options.headers as Record<string, string>), Accept: accept };
    if (payload !== undefined) {
      headers['Content-Type'] = contentType;
      headers['Content-Length'] = payload.length;
    }
    const url = new URL(`${access.server}${path}`);
    const req = (url.protocol === 'http:' ? http : https).request(url, { ...access.options, agent, method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(payload);
  });
}

/** Opens a streaming GET (a list page or a watch); rejects unless the status is 200. */
export function stream(access: ServerAccess, agent: http.Agent | undefined, path: string, accept: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const headers = { ...(access.options.headers as Record<string, string>), Accept: accept };
    const url = new URL(`${access.server}${path}`);
    const req = (url.protocol === 'http:' ? http : https).get(url, { ...access.options, agent, headers }, (res) => {
      if (res.statusCode !== 200) {
        res.resume();
        reject(new Error(`GET ${path}: HTTP ${res.statusCode}`));
      } else resolve(res);
    });
    req.on('error', reject);
  });
}
