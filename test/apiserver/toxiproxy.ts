// Toxiproxy between an informer and the real kube-apiserver: a TCP proxy that resets, slows, caps and stalls connections on request.
//
// The server is built by scripts/toxiproxy/build.sh (Toxiproxy v2 from the Go module proxy) and driven
// through its HTTP API (`/proxies`, `/proxies/<name>/toxics`). TLS passes through untouched: the
// informer's kubeconfig points at the proxy's loopback port, which the apiserver's certificate (SAN
// 127.0.0.1) still matches.

import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeConfig } from '@kubernetes/client-node';
import type { RealApiServer } from './harness.js';

const buildScript = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'scripts', 'toxiproxy', 'build.sh');

/** A toxic as Toxiproxy's API takes it (`latency`, `bandwidth`, `reset_peer`, `timeout`, …). */
export interface Toxic {
  type: 'latency' | 'bandwidth' | 'reset_peer' | 'timeout' | 'slow_close' | 'slicer' | 'limit_data';
  /** `downstream` (server → client, the default) or `upstream`. */
  stream?: 'downstream' | 'upstream';
  attributes: Record<string, number>;
}

/** A running Toxiproxy with one proxy in front of a kube-apiserver. */
export interface ApiServerProxy {
  /** A kubeconfig for the apiserver through the proxy (same CA and token). */
  kubeConfig: KubeConfig;
  /** Adds a toxic to every connection through the proxy; resolves with its name. */
  add(toxic: Toxic): Promise<string>;
  /** Removes a toxic. */
  remove(name: string): Promise<void>;
  /** Stops the Toxiproxy server. */
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function build(): Promise<string> {
  const child = spawn('bash', [buildScript], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('close', resolve));
  if (code !== 0) throw new Error(`scripts/toxiproxy/build.sh failed with exit code ${code}`);
  return out.trim().split('\n').at(-1) ?? '';
}

/** Starts Toxiproxy and a proxy from a free loopback port to `server`. */
export async function proxyApiServer(server: RealApiServer): Promise<ApiServerProxy> {
  const binary = await build();
  const [apiPort, listenPort] = [await freePort(), await freePort()];
  const child: ChildProcess = spawn(binary, ['-host', '127.0.0.1', '-port', String(apiPort)], { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-10_000)));
  const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
  const api = `http://127.0.0.1:${apiPort}`;
  const call = async (method: string, path: string, body?: unknown): Promise<unknown> => {
    const res = await fetch(api + path, { method, headers: { 'Content-Type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    const text = await res.text();
    if (!res.ok) throw new Error(`toxiproxy ${method} ${path}: HTTP ${res.status} ${text}`);
    return text === '' || !(res.headers.get('content-type') ?? '').includes('json') ? text : JSON.parse(text);
  };
  for (let i = 0; ; i++) {
    try {
      await call('GET', '/version');
      break;
    } catch (err) {
      if (i > 100 || child.exitCode !== null) throw new Error(`toxiproxy did not start: ${String(err)}\n${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  const upstream = new URL(server.server);
  await call('POST', '/proxies', { name: 'apiserver', listen: `127.0.0.1:${listenPort}`, upstream: `${upstream.hostname}:${upstream.port}`, enabled: true });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: 'proxied', server: `https://127.0.0.1:${listenPort}`, caData: Buffer.from(server.ca).toString('base64'), skipTLSVerify: false }],
    users: [{ name: 'admin', token: server.token }],
    contexts: [{ name: 'proxied', cluster: 'proxied', user: 'admin' }],
    currentContext: 'proxied',
  });
  let n = 0;
  return {
    kubeConfig,
    async add(toxic) {
      const name = `${toxic.type}-${n++}`;
      await call('POST', '/proxies/apiserver/toxics', { name, type: toxic.type, stream: toxic.stream ?? 'downstream', toxicity: 1, attributes: toxic.attributes });
      return name;
    },
    async remove(name) {
      await call('DELETE', `/proxies/apiserver/toxics/${name}`);
    },
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}
