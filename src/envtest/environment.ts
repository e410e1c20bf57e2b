// startTestEnvironment: etcd + kube-apiserver on free loopback ports in a temp dir, CRDs installed.

import { execFile } from 'node:child_process';
import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { realClock, sleep, type Clock } from '../core/clock.js';
import { AbortedError } from '../core/errors.js';
import { checkApiServerVersion, resolveBinaryAssets, type BinaryAssets } from './assets.js';
import type { CustomResourceDefinition } from 'kubernetes-types/apiextensions/v1.js';
import { installCrds, loadCrds, waitEstablished, type TestEnvironmentCrd } from './crds.js';
import { TestEnvironmentError } from './errors.js';
import { freePorts, portIsFree, request, type ApiServerEndpoint } from './http.js';
import { mergeFlags, validateTestEnvironmentOptions, type TestEnvironmentOptions } from './options.js';
import { Reaper, ServerProcess } from './process.js';

/** The user of the kubeconfig: a static bearer token in `system:masters`. */
const ADMIN = 'envtest-admin';

/** A running etcd + kube-apiserver. `stop()` ends both and removes their directory. */
export interface TestEnvironment {
  /** A client-node `KubeConfig` for the server: CA-verified TLS, a `system:masters` bearer token. */
  readonly kubeConfig: KubeConfig;
  /** The same as a kubeconfig file (in {@link TestEnvironment.dir}; gone after `stop()`), for `KUBECONFIG`, kubectl or a child process. */
  readonly kubeconfigPath: string;
  /** `https://127.0.0.1:<port>`. */
  readonly server: string;
  /** The bearer token of the kubeconfig's user. */
  readonly token: string;
  /** PEM of the CA bundle the serving certificate verifies against. */
  readonly ca: string;
  /** etcd's client URL, `http://127.0.0.1:<port>` (its v3 JSON gateway too). */
  readonly etcdEndpoint: string;
  /** The kube-apiserver release, e.g. `1.37.2`. */
  readonly kubernetesVersion: string;
  /** Where the binaries came from. */
  readonly binaryAssets: BinaryAssets;
  /** The temp dir: etcd data, certificates, `etcd.log`, `kube-apiserver.log`, the kubeconfig. */
  readonly dir: string;
  /** The names of the CRDs installed at start. */
  readonly crds: readonly string[];
  /** Process ids, so a test can check that nothing is left (`controllerManager` 0 when not run). */
  readonly pids: {
    /** etcd's pid (a new one after `restart('etcd')`). */
    readonly etcd: number;
    /** kube-apiserver's pid (a new one after `restart('kube-apiserver')`). */
    readonly apiServer: number;
    /** kube-controller-manager's pid, 0 when it is not run. */
    readonly controllerManager: number;
    /** The watchdog that cleans up if this process dies; it exits after `stop()`. */
    readonly reaper: number;
  };
  /** Installs more CRDs and waits until they are established and served (same rules as the `crds` option). */
  installCrds(crds: readonly TestEnvironmentCrd[], options?: { timeoutMs?: number; signal?: AbortSignal }): Promise<string[]>;
  /**
   * Kills kube-apiserver or etcd with SIGKILL and starts it again with the same flags, ports and data,
   * resolving once `/readyz` is ok again (a fault for resilience tests).
   */
  restart(what: 'kube-apiserver' | 'etcd', options?: { signal?: AbortSignal }): Promise<void>;
  /**
   * Stops kube-controller-manager (when run), kube-apiserver, then etcd (SIGTERM, SIGKILL after
   * `stopTimeoutMs`) and removes the directory. Rejects with `ENVTEST_PROCESS_FAILED` if a server had
   * died before `stop()` — after cleaning up all the same. Calling it again returns the same promise.
   */
  stop(): Promise<void>;
}

/**
 * Starts etcd and kube-apiserver for a test, like controller-runtime's envtest: free loopback ports,
 * a fresh temp dir, a kubeconfig with an admin token, then the `crds` installed and `Established`.
 *
 * @example
 * ```ts
 * import { startTestEnvironment } from 'kube-informer/envtest';
 * const env = await startTestEnvironment({ crds: ['config/crd/bases'] });
 * try {
 *   // env.kubeConfig is a client-node KubeConfig for the real server
 * } finally {
 *   await env.stop();
 * }
 * ```
 *
 * Recovery: every failure rejects with a {@link TestEnvironmentError} whose message names the cause
 * and the fix, after stopping whatever had started and removing the directory. A start that fails
 * with `ENVTEST_PROCESS_FAILED` quotes the last lines of the failing server's log.
 *
 * Warning: the servers outlive a crashed test process only for as long as the reaper takes to stop
 * them (SIGTERM, then SIGKILL after `stopTimeoutMs`): a watchdog child notices this process is gone
 * when the pipe it holds closes, stops the servers and removes the directory. A SIGKILL to the whole
 * process group spares only that watchdog (it runs in its own session) and it cleans up too.
 */
export async function startTestEnvironment(options: TestEnvironmentOptions = {}): Promise<TestEnvironment> {
  validateTestEnvironmentOptions(options);
  const clock = options.clock ?? realClock;
  const deadline = clock.now() + (options.startTimeoutMs ?? 90_000);
  const signal = options.signal;
  const crdObjects = loadCrds(options.crds ?? [], 'startTestEnvironment: option crds');
  const assets = resolveBinaryAssets({ binaryAssetsDir: options.binaryAssetsDir, kubernetesVersion: options.kubernetesVersion });
  const kcmBinary = join(assets.dir, 'kube-controller-manager');
  if (options.controllerManager && !existsSync(kcmBinary)) {
    throw new TestEnvironmentError('ENVTEST_NO_BINARIES', `envtest: controllerManager was asked for, but ${assets.dir} holds no kube-controller-manager (setup-envtest's sets do not). Fix: use the set \`npx kube-informer envtest use -p path\` builds, or leave controllerManager out.`);
  }
  const [version, etcdVersion] = await Promise.all([checkApiServerVersion(assets, options.kubernetesVersion, signal), binaryVersion(assets.etcd, signal)]);
  for (const [name, port] of [['apiServerPort', options.apiServerPort], ['etcdPort', options.etcdPort]] as const) {
    if (port !== undefined && !(await portIsFree(port))) {
      throw new TestEnvironmentError('ENVTEST_PORT_IN_USE', `envtest: port ${port} (the ${name} option) is in use by another process on 127.0.0.1. Fix: leave ${name} out to take a free port, or stop what holds it (\`ss -ltnp 'sport = :${port}'\` names it).`);
    }
  }

  const graceMs = options.stopTimeoutMs ?? 10_000;
  const dir = mkdtempSync(join(tmpdir(), 'kube-informer-envtest-'));
  const reaper = new Reaper(dir, graceMs);
  const running: ServerProcess[] = [];
  try {
    const token = randomBytes(16).toString('hex');
    const pki = writePki(dir, token);
    const [freeEtcd, freeApi, kcmPort] = await freePorts(3);
    let etcdPort = options.etcdPort ?? freeEtcd;
    let apiPort = options.apiServerPort ?? freeApi;
    let etcdEndpoint = '';
    let server = '';
    let etcdArgs: string[] = [];
    let apiArgs: string[] = [];
    const configure = (): void => {
      etcdEndpoint = `http://127.0.0.1:${etcdPort}`;
      server = `https://127.0.0.1:${apiPort}`;
      etcdArgs = mergeFlags(
        [
          `--data-dir=${join(dir, 'etcd')}`, `--listen-client-urls=${etcdEndpoint}`, `--advertise-client-urls=${etcdEndpoint}`,
          '--listen-peer-urls=http://127.0.0.1:0', '--log-level=warn',
          // Not on 3.4 (no such flag); a throwaway etcd needs no fsync and is much faster without it.
          ...(/Version: 3\.4\./.test(etcdVersion) ? [] : ['--unsafe-no-fsync']),
        ],
        options.etcdArgs,
      );
      apiArgs = mergeFlags(
        [
          `--etcd-servers=${etcdEndpoint}`, '--bind-address=127.0.0.1', '--advertise-address=127.0.0.1', `--secure-port=${apiPort}`,
          // No --tls-cert-file: kube-apiserver writes its own CA and serving certificate (127.0.0.1,
          // localhost) into --cert-dir, and the kubeconfig trusts that bundle. No openssl needed.
          `--cert-dir=${pki.certDir}`, `--token-auth-file=${pki.tokens}`, '--authorization-mode=RBAC', '--anonymous-auth=false',
          '--service-account-issuer=https://kubernetes.default.svc.cluster.local',
          `--service-account-key-file=${pki.saPublic}`, `--service-account-signing-key-file=${pki.saPrivate}`,
          '--service-cluster-ip-range=10.0.0.0/24', '--allow-privileged=true',
          // As controller-runtime's envtest: no controller creates the `default` ServiceAccount, so the
          // admission plugin would refuse every Pod.
          '--disable-admission-plugins=ServiceAccount',
          // kube-apiserver ≥ 1.37 refuses a loopback advertise address for the `kubernetes` Service's endpoints.
          '--endpoint-reconciler-type=none',
        ],
        options.apiServerArgs,
      );
    };
    configure();
    const wait = { clock, deadline, signal };
    const startEtcd = async (): Promise<ServerProcess> => {
      const etcd = track(running, new ServerProcess('etcd', assets.etcd, etcdArgs, join(dir, 'etcd.log'), reaper));
      await pollReady(etcd, [etcd], wait, async () => {
        const answer = await request(`${etcdEndpoint}/health`, { signal, idleMs: 2000 });
        return answer.status === 200 && answer.body.includes('"health":"true"');
      });
      return etcd;
    };
    let ca = '';
    const endpoint = (): ApiServerEndpoint => ({ server, ca, token });
    const startApi = async (etcd: ServerProcess): Promise<ServerProcess> => {
      const api = track(running, new ServerProcess('kube-apiserver', assets.kubeApiServer, apiArgs, join(dir, 'kube-apiserver.log'), reaper));
      await pollReady(api, [api, etcd], wait, async () => {
        if (ca === '') {
          if (!existsSync(pki.servingCert)) return false;
          ca = readFileSync(pki.servingCert, 'utf8');
        }
        const answer = await request(`${server}/readyz`, { endpoint: endpoint(), signal, idleMs: 5000 });
        return answer.status === 200;
      });
      return api;
    };
    // A free port can be taken between the pick and the bind (another test, another envtest): a
    // server that exits with "address already in use" on a port envtest picked gets a fresh one, twice.
    const retryOnClash = async <R>(start: () => Promise<R>, mayRetry: boolean, repick: () => Promise<void>): Promise<R> => {
      for (let attempt = 1; ; attempt++) {
        try {
          return await start();
        } catch (err) {
          const failed = running.at(-1);
          if (!mayRetry || attempt >= 3 || failed?.exit === undefined || !/address already in use/i.test(failed.logTail(40))) throw err;
          running.pop();
          reaper.forget(failed.pid);
          await repick();
          configure();
        }
      }
    };
    let etcd = await retryOnClash(startEtcd, options.etcdPort === undefined, async () => {
      rmSync(join(dir, 'etcd'), { recursive: true, force: true });
      [etcdPort] = (await freePorts(1)) as [number];
    });
    let api = await retryOnClash(() => startApi(etcd), options.apiServerPort === undefined, async () => {
      [apiPort] = (await freePorts(1)) as [number];
    });

    const kubeconfigPath = join(dir, 'kubeconfig');
    const kubeConfig = writeKubeConfig(kubeconfigPath, server, ca, token);
    let kcm: ServerProcess | undefined;
    if (options.controllerManager) {
      const extra = typeof options.controllerManager === 'object' ? options.controllerManager.args : undefined;
      const kcmArgs = mergeFlags(
        [
          `--kubeconfig=${kubeconfigPath}`, "--controllers=*", '--leader-elect=false', '--bind-address=127.0.0.1', `--secure-port=${kcmPort}`,
          `--cert-dir=${join(dir, 'controller-manager-certs')}`, `--service-account-private-key-file=${pki.saPrivate}`,
          `--root-ca-file=${pki.servingCert}`, '--use-service-account-credentials=false', '--service-cluster-ip-range=10.0.0.0/24',
          '--kube-api-qps=100', '--kube-api-burst=200',
        ],
        extra,
      );
      kcm = track(running, new ServerProcess('kube-controller-manager', kcmBinary, kcmArgs, join(dir, 'kube-controller-manager.log'), reaper));
      const started = kcm;
      await pollReady(started, [started, api, etcd], wait, async () => {
        const answer = await request(`https://127.0.0.1:${kcmPort}/healthz`, { signal, idleMs: 2000, insecure: true });
        return answer.status === 200;
      });
    }
    const installed = await installCrds(kubeConfig, crdObjects, wait);
    // By name: installing one again (server-side apply) replaces what a restart waits for.
    const allCrds = new Map<string, CustomResourceDefinition>(crdObjects.map((crd) => [crd.metadata?.name ?? '', crd]));

    let stopping: Promise<void> | undefined;
    const env: TestEnvironment = {
      kubeConfig,
      kubeconfigPath,
      server,
      token,
      ca,
      etcdEndpoint,
      kubernetesVersion: version,
      binaryAssets: assets,
      dir,
      crds: installed,
      get pids() {
        return { etcd: etcd.pid, apiServer: api.pid, controllerManager: kcm?.pid ?? 0, reaper: reaper.pid };
      },
      async installCrds(more, opts = {}) {
        const objects = loadCrds(more, 'installCrds: crds');
        const names = await installCrds(kubeConfig, objects, { clock, deadline: clock.now() + (opts.timeoutMs ?? 30_000), signal: opts.signal });
        for (const crd of objects) allCrds.set(crd.metadata?.name ?? '', crd);
        return names;
      },
      async restart(what, opts = {}) {
        const restartWait = { clock, deadline: clock.now() + (options.startTimeoutMs ?? 90_000), signal: opts.signal };
        const old = what === 'etcd' ? etcd : api;
        await old.kill();
        reaper.forget(old.pid);
        running.splice(running.indexOf(old), 1);
        if (what === 'etcd') {
          const fresh = track(running, new ServerProcess('etcd', assets.etcd, etcdArgs, join(dir, 'etcd.log'), reaper));
          etcd = fresh;
          // The apiserver (and controller manager) must be stopped before etcd: watch them again after it.
          for (const p of [api, kcm]) if (p) { reaper.forget(p.pid); reaper.watch(p.pid); }
          await pollReady(fresh, [fresh], restartWait, async () => (await request(`${etcdEndpoint}/health`, { idleMs: 2000 })).body.includes('"health":"true"'));
        } else {
          const fresh = track(running, new ServerProcess('kube-apiserver', assets.kubeApiServer, apiArgs, join(dir, 'kube-apiserver.log'), reaper));
          api = fresh;
          if (kcm) { reaper.forget(kcm.pid); reaper.watch(kcm.pid); }
        }
        await pollReady(api, [api, etcd], restartWait, async () => (await request(`${server}/readyz`, { endpoint: endpoint(), idleMs: 5000 })).status === 200);
        // /readyz is ok before the CRD handlers have re-read their storage (they answer 429 until then).
        await waitEstablished(kubeConfig, [...allCrds.values()], restartWait);
      },
      stop() {
        stopping ??= (async () => {
          // A Ctrl-C (SIGINT to the whole process group) ends the servers too: not a failure.
          const died = running.filter((p) => p.exit !== undefined && p.exit.signal !== 'SIGINT' && p.exit.code !== 0);
          await shutdown(running, reaper, dir, clock, graceMs);
          if (died.length > 0) {
            throw new TestEnvironmentError('ENVTEST_PROCESS_FAILED', `envtest: ${died.map((p) => `${p.name} ${p.describeExit()}`).join(' and ')} before stop() was called; the tests after that ran against a broken server.\n${died.map((p) => `last lines of ${p.name}.log:\n${p.logTail()}`).join('\n')}`);
          }
        })();
        return stopping;
      },
    };
    return env;
  } catch (err) {
    await shutdown(running, reaper, dir, clock, graceMs);
    throw err;
  }
}

/** The stop order: the apiserver's clients first, etcd last (an apiserver without etcd spins). */
const STOP_ORDER = ['kube-controller-manager', 'kube-apiserver', 'etcd'];

/** Stops the processes (controller manager, apiserver, etcd), removes the directory, then dismisses the reaper. */
async function shutdown(running: readonly ServerProcess[], reaper: Reaper, dir: string, clock: Clock, graceMs: number): Promise<void> {
  const ordered = [...running].sort((a, b) => STOP_ORDER.indexOf(a.name) - STOP_ORDER.indexOf(b.name));
  for (const p of ordered) await p.stop(clock, graceMs);
  rmSync(dir, { recursive: true, force: true, maxRetries: 5 });
  await reaper.release();
}

function track(running: ServerProcess[], p: ServerProcess): ServerProcess {
  running.push(p);
  return p;
}

/**
 * Polls `ready` every 100 ms until it answers true. Fails at once when one of `watched` exits
 * (`ENVTEST_PROCESS_FAILED` with its log), when the deadline passes, or when the signal aborts.
 */
async function pollReady(
  starting: ServerProcess,
  watched: readonly ServerProcess[],
  wait: { clock: Clock; deadline: number; signal?: AbortSignal | undefined },
  ready: () => Promise<boolean>,
): Promise<void> {
  for (;;) {
    const dead = watched.find((p) => p.exit !== undefined);
    if (dead) throw processFailed(dead, dead === starting ? 'during start-up' : `while ${starting.name} was starting`);
    if (await ready()) return;
    if (wait.signal?.aborted) throw new AbortedError(`envtest: the start was aborted while waiting for ${starting.name}`, { cause: wait.signal.reason });
    if (wait.clock.now() >= wait.deadline) {
      throw new TestEnvironmentError('ENVTEST_PROCESS_FAILED', `envtest: ${starting.name} was not ready before startTimeoutMs ran out. Fix: raise startTimeoutMs on a slow or busy machine, or read why in its log:\n${starting.logTail()}`);
    }
    await sleep(wait.clock, 100, wait.signal);
  }
}

function processFailed(p: ServerProcess, when: string): TestEnvironmentError {
  const tail = p.logTail();
  const inUse = /address already in use/i.test(tail) ? ' Its port is taken by another process: pick another or leave the port option out.' : '';
  const hint = p.exit?.error ? ` Fix: check that ${p.name} is an executable for this machine.` : inUse;
  return new TestEnvironmentError('ENVTEST_PROCESS_FAILED', `envtest: ${p.name} ${p.describeExit()} ${when}.${hint}\nlast lines of ${p.name}.log:\n${tail}`);
}

/** `<binary> --version`'s output, or '' when it printed nothing recognisable (the start then tells why). */
function binaryVersion(binary: string, signal?: AbortSignal): Promise<string> {
  return new Promise((resolve) => execFile(binary, ['--version'], { signal, encoding: 'utf8' }, (_err, stdout) => resolve(stdout ?? '')));
}

/** The service-account key pair (node:crypto, P-256) and the token file; the serving cert is the apiserver's own. */
function writePki(dir: string, token: string): { certDir: string; servingCert: string; tokens: string; saPrivate: string; saPublic: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const saPrivate = join(dir, 'sa.key');
  const saPublic = join(dir, 'sa.pub');
  writeFileSync(saPrivate, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
  writeFileSync(saPublic, publicKey.export({ type: 'spki', format: 'pem' }));
  const tokens = join(dir, 'tokens.csv');
  writeFileSync(tokens, `${token},${ADMIN},${ADMIN},"system:masters"\n`, { mode: 0o600 });
  const certDir = join(dir, 'apiserver-certs');
  return { certDir, servingCert: join(certDir, 'apiserver.crt'), tokens, saPrivate, saPublic };
}

function writeKubeConfig(path: string, server: string, ca: string, token: string): KubeConfig {
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'envtest', cluster: { server, 'certificate-authority-data': Buffer.from(ca).toString('base64') } }],
    users: [{ name: ADMIN, user: { token } }],
    contexts: [{ name: 'envtest', context: { cluster: 'envtest', user: ADMIN } }],
    'current-context': 'envtest',
  };
  // JSON is YAML: kubectl, client-go and client-node all read this file.
  writeFileSync(path, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(path);
  return kubeConfig;
}
