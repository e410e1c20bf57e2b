// Stand-ins for etcd and kube-apiserver (small Node scripts), so envtest's failure paths run in `npm test`.
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** How each stand-in behaves once started (`--version` always answers). */
export interface FakeBehaviour {
  /** The release `kube-apiserver --version` prints. Default 1.37.2. */
  version?: string;
  /**
   * etcd: `serve` answers /health on its client URL; `fail` prints to its log and exits 1;
   * `clash-once` fails its first run with "address already in use", then serves. Default serve.
   */
  etcd?: 'serve' | 'fail' | 'clash-once';
  /** kube-apiserver: `hang` runs and never becomes ready; `fail` exits 1; `clash-once` as etcd's, then hangs. Default hang. */
  apiServer?: 'hang' | 'fail' | 'clash-once';
  /** Each stand-in writes its pid to `<pidDir>/<name>.pid` once running, and appends its port to `<name>.ports`. */
  pidDir?: string;
}

/** Writes `etcd` and `kube-apiserver` stand-ins into a fresh directory under `root` and returns it. */
export function fakeBinaries(root: string, behaviour: FakeBehaviour = {}): string {
  const dir = mkdtempSync(join(root, 'assets-'));
  const common = `
const fs = require('node:fs');
const args = process.argv.slice(2);
const pidDir = ${JSON.stringify(behaviour.pidDir ?? '')};
const portFlag = args.find((a) => a.startsWith('--listen-client-urls=') || a.startsWith('--secure-port='));
const port = portFlag ? portFlag.split(':').at(-1).split('=').at(-1) : '';
if (pidDir) fs.appendFileSync(pidDir + '/' + NAME + '.ports', port + '\\n');
if (BEHAVIOUR === 'clash-once' && pidDir && !fs.existsSync(pidDir + '/' + NAME + '.clashed')) {
  fs.writeFileSync(pidDir + '/' + NAME + '.clashed', '');
  console.error('listen tcp 127.0.0.1:' + port + ': bind: address already in use');
  process.exit(1);
}
if (pidDir) fs.writeFileSync(pidDir + '/' + NAME + '.pid', String(process.pid));
`;
  const etcd = `#!${process.execPath}
const NAME = 'etcd';
const BEHAVIOUR = ${JSON.stringify(behaviour.etcd ?? 'serve')};
if (process.argv.includes('--version')) { console.log('etcd Version: 3.7.0'); process.exit(0); }
${common}
if (${JSON.stringify(behaviour.etcd ?? 'serve')} === 'fail') { console.error('etcd: cannot access data directory: permission denied'); process.exit(1); }
const url = new URL(args.find((a) => a.startsWith('--listen-client-urls=')).split('=')[1]);
require('node:http').createServer((req, res) => res.end('{"health":"true"}')).listen(Number(url.port), '127.0.0.1');
`;
  const api = `#!${process.execPath}
const NAME = 'kube-apiserver';
const BEHAVIOUR = ${JSON.stringify(behaviour.apiServer ?? 'hang')};
if (process.argv.includes('--version')) { console.log('Kubernetes v${behaviour.version ?? '1.37.2'}'); process.exit(0); }
${common}
if (${JSON.stringify(behaviour.apiServer ?? 'hang')} === 'fail') { console.error('Error: unknown flag: --bogus'); process.exit(1); }
setInterval(() => {}, 1000);
`;
  for (const [name, text] of [['etcd', etcd], ['kube-apiserver', api]] as const) {
    writeFileSync(join(dir, name), text);
    chmodSync(join(dir, name), 0o755);
  }
  return dir;
}

/** A scratch directory with `tmp/` (point TMPDIR there to see what envtest leaves) and `pids/`. */
export function scratch(): { root: string; tmp: string; pids: string } {
  const root = mkdtempSync(join(tmpdir(), 'kube-informer-envtest-test-'));
  mkdirSync(join(root, 'tmp'));
  mkdirSync(join(root, 'pids'));
  return { root, tmp: join(root, 'tmp'), pids: join(root, 'pids') };
}

/** True while `pid` runs; a zombie (dead, not yet reaped by its parent) counts as gone. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat[stat.lastIndexOf(')') + 2] !== 'Z';
  } catch {
    return true;
  }
}
