import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ErrorCodes } from '../../src/core/index.js';
import { NetworkError, newListWatch, type KubeListWatch } from '../../src/listwatch/index.js';
import {
  kubeConfigFor,
  startServer,
  type TestServer,
  type TestUser,
  useCleanups,
} from './helpers.js';

const PODS = { group: '', version: 'v1', resource: 'pods' };
const LIST = '{"apiVersion":"v1","kind":"PodList","metadata":{"resourceVersion":"1"},"items":[]}';

function hasOpenssl(): boolean {
  try {
    execFileSync('openssl', ['version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

const opensslPresent = hasOpenssl();
const { cleanups } = useCleanups();
let dir = '';
const pem: Record<'serverCert' | 'serverKey' | 'clientCert' | 'clientKey', string> = {
  serverCert: '',
  serverKey: '',
  clientCert: '',
  clientKey: '',
};

/** A self-signed EC certificate (valid for a day) made with the openssl CLI. */
function selfSigned(name: string, cn: string, san?: string): { cert: string; key: string } {
  const args = ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-days', '1'];
  args.push('-subj', `/CN=${cn}`, '-keyout', join(dir, `${name}.key`), '-out', join(dir, `${name}.crt`));
  if (san !== undefined) args.push('-addext', `subjectAltName=${san}`);
  execFileSync('openssl', args, { stdio: 'ignore' });
  return { cert: readFileSync(join(dir, `${name}.crt`), 'utf8'), key: readFileSync(join(dir, `${name}.key`), 'utf8') };
}

beforeAll(() => {
  if (!opensslPresent) return;
  dir = mkdtempSync(join(tmpdir(), 'kube-informer-tls-'));
  const server = selfSigned('server', 'localhost', 'IP:127.0.0.1,DNS:localhost');
  const client = selfSigned('client', 'tester-client');
  pem.serverCert = server.cert;
  pem.serverKey = server.key;
  pem.clientCert = client.cert;
  pem.clientKey = client.key;
});

afterAll(() => {
  if (dir !== '') rmSync(dir, { recursive: true, force: true });
});


const b64 = (text: string): string => Buffer.from(text).toString('base64');

async function tlsServer(): Promise<TestServer> {
  const server = await startServer((_req, res) => res.end(LIST), {
    cert: pem.serverCert,
    key: pem.serverKey,
    requestCert: true,
    rejectUnauthorized: false,
    ca: pem.clientCert,
  });
  cleanups.push(() => server.close());
  return server;
}

function lwFor(url: string, user: TestUser, cluster: { skipTLSVerify?: boolean; caData?: string }): KubeListWatch<unknown> {
  const lw = newListWatch(kubeConfigFor(url, user, cluster), PODS);
  cleanups.push(() => lw.close());
  return lw;
}

const signal = (): AbortSignal => new AbortController().signal;

describe.skipIf(!opensslPresent)('TLS from the KubeConfig (needs the openssl CLI to mint certificates)', () => {
  it('trusts a self-signed server through the cluster CA and sends the bearer token', async () => {
    const server = await tlsServer();
    const lw = lwFor(server.url, { token: 'tls-token' }, { caData: b64(pem.serverCert) });
    const list = await lw.list({}, signal());
    expect(list.metadata.resourceVersion).toBe('1');
    expect(server.requests[0].headers.authorization).toBe('Bearer tls-token');
  });

  it('fails with a NetworkError naming the TLS problem when the server is not trusted', async () => {
    const server = await tlsServer();
    const err = await lwFor(server.url, { token: 't' }, {}).list({}, signal()).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NetworkError);
    expect((err as NetworkError).code).toBe(ErrorCodes.NETWORK);
    expect((err as NetworkError).syscallCode).toBe('DEPTH_ZERO_SELF_SIGNED_CERT');
  });

  it('connects to an untrusted server when insecure-skip-tls-verify is set', async () => {
    const server = await tlsServer();
    await expect(lwFor(server.url, { token: 't' }, { skipTLSVerify: true }).list({}, signal())).resolves.toBeDefined();
  });

  it('presents the client certificate from the KubeConfig user', async () => {
    const server = await tlsServer();
    const lw = lwFor(
      server.url,
      { certData: b64(pem.clientCert), keyData: b64(pem.clientKey) },
      { caData: b64(pem.serverCert) },
    );
    await lw.list({}, signal());
    expect(server.requests[0].peerCN).toBe('tester-client');
    expect(server.requests[0].headers.authorization).toBeUndefined();
  });
});

describe('credentials from the KubeConfig', () => {
  it('sends basic auth for a user with a username and password', async () => {
    const server = await startServer((_req, res) => res.end(LIST));
    cleanups.push(() => server.close());
    await lwFor(server.url, { username: 'admin', password: 'p@ss' }, { skipTLSVerify: true }).list({}, signal());
    expect(server.requests[0].headers.authorization).toBe(`Basic ${b64('admin:p@ss')}`);
  });

  it('runs an exec credential plugin and sends the token it prints', async () => {
    const server = await startServer((_req, res) => res.end(LIST));
    cleanups.push(() => server.close());
    const credential = {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'from-exec-plugin' },
    };
    const exec = {
      apiVersion: 'client.authentication.k8s.io/v1',
      command: process.execPath,
      args: ['-e', `process.stdout.write(${JSON.stringify(JSON.stringify(credential))})`],
      interactiveMode: 'Never',
    };
    await lwFor(server.url, { exec }, { skipTLSVerify: true }).list({}, signal());
    expect(server.requests[0].headers.authorization).toBe('Bearer from-exec-plugin');
  });

  it('reports a failing exec plugin as a KubeConfigError', async () => {
    const exec = { apiVersion: 'client.authentication.k8s.io/v1', command: process.execPath, args: ['-e', 'process.exit(3)'] };
    const lw = lwFor('http://127.0.0.1:1', { exec }, { skipTLSVerify: true });
    await expect(lw.list({}, signal())).rejects.toMatchObject({ code: ErrorCodes.KUBECONFIG });
  });
});
