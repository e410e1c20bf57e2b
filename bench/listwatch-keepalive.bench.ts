// Benchmark of newListWatch's list calls with and without its keep-alive agent, over HTTP and HTTPS.
//
// Run: npx tsx bench/listwatch-keepalive.bench.ts [requests=1000]   (not part of npm test)
// A local server answers every list with the same 10-pod PodList. Prints lists/second for
// `keepAlive: true` (the default) and `false`, the ratio, and how many connections each opened. The
// HTTPS run mints a self-signed certificate with the openssl CLI and is skipped without it.

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { newListWatch } from '../src/listwatch/index.js';
import { makePod } from './lib/pods.js';

const REQUESTS = Number(process.argv[2] ?? 1000);
const BODY = JSON.stringify({
  apiVersion: 'v1',
  kind: 'PodList',
  metadata: { resourceVersion: '100' },
  items: Array.from({ length: 10 }, (_, i) => makePod(i)),
});

function tlsMaterial(): { cert: string; key: string } | undefined {
  const dir = mkdtempSync(join(tmpdir(), 'kube-informer-bench-'));
  try {
    const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'];
    args.push('-subj', '/CN=localhost', '-keyout', join(dir, 'k.pem'), '-out', join(dir, 'c.pem'));
    execFileSync('openssl', args, { stdio: 'ignore' });
    return { cert: readFileSync(join(dir, 'c.pem'), 'utf8'), key: readFileSync(join(dir, 'k.pem'), 'utf8') };
  } catch {
    return undefined;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function run(protocol: 'http' | 'https', keepAlive: boolean, tls?: { cert: string; key: string }): Promise<void> {
  let connections = 0;
  const handler = (_req: http.IncomingMessage, res: http.ServerResponse): void => {
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end(BODY);
  };
  const server = protocol === 'https' ? https.createServer(tls ?? {}, handler) : http.createServer(handler);
  server.keepAliveTimeout = 60_000;
  server.on(protocol === 'https' ? 'secureConnection' : 'connection', () => connections++);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const kc = new KubeConfig();
  kc.loadFromClusterAndUser(
    { name: 'bench', server: `${protocol}://127.0.0.1:${port}`, skipTLSVerify: true },
    { name: 'bench', token: 'bench-token' },
  );
  const lw = newListWatch(kc, { group: '', version: 'v1', resource: 'pods' }, { keepAlive });
  const signal = new AbortController().signal;
  for (let i = 0; i < 50; i++) await lw.list({}, signal); // warm-up
  connections = 0;
  const start = process.hrtime.bigint();
  for (let i = 0; i < REQUESTS; i++) await lw.list({}, signal);
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  lw.close();
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  const rate = Math.round((REQUESTS / ms) * 1000);
  console.log(`${protocol.padEnd(5)} keepAlive=${String(keepAlive).padEnd(5)}: ${rate} lists/s, ${connections} new connections`);
  results.set(`${protocol}-${keepAlive}`, rate);
}

const results = new Map<string, number>();

async function main(): Promise<void> {
  console.log(`${REQUESTS} sequential lists of a 10-pod PodList (${(BODY.length / 1024).toFixed(0)} KB)`);
  await run('http', true);
  await run('http', false);
  console.log(`http  ratio keep-alive/no keep-alive: ${((results.get('http-true') ?? 0) / (results.get('http-false') ?? 1)).toFixed(2)}`);
  const tls = tlsMaterial();
  if (tls === undefined) {
    console.log('https skipped: the openssl CLI is not available');
    return;
  }
  await run('https', true, tls);
  await run('https', false, tls);
  console.log(`https ratio keep-alive/no keep-alive: ${((results.get('https-true') ?? 0) / (results.get('https-false') ?? 1)).toFixed(2)}`);
}

await main();
