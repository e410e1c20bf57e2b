// The import table of CONTRIBUTING.md ("Layout") as dependency-cruiser rules; `npm run lint` runs it.
//
// Three rules, each over every file in src/:
// - the table: a room imports only the rooms in its row (ROWS below — CONTRIBUTING.md's table says the same);
// - no side door: a file of another room is imported only if that room's index.ts re-exports it (the
//   room's contract), or it is listed in SHARED_INTERNALS; CONTRACTS narrows that for some pairs;
// - no file circle: no import cycle, type-only imports included.
// An import that cannot be resolved is an error too, so a broken resolver cannot make the check pass.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

/**
 * The rows of the table: room -> the rooms it may import (its own files are always allowed).
 * `core` imports nothing, `observability` only core; `runtime` is the one runtime (runnable group, backoff,
 * ring buffer) between them and everything above; nothing in src/ imports `testing` except `testing`.
 */
const ROWS = {
  core: [],
  // observability: diagnostics_channel names and the metrics vocabulary (metric shapes, queue metrics, prom-client shapes); core for the clock and option checks.
  observability: ['core'],
  runtime: ['core', 'observability'],
  // listwatch publishes its requests on the diagnostics channels (observability imports nothing).
  listwatch: ['core', 'observability', 'runtime'],
  reflector: ['core', 'observability', 'runtime', 'listwatch'],
  fifo: ['core', 'runtime'],
  store: ['core', 'runtime'],
  mutation: ['core', 'observability', 'runtime'],
  // What an informer knows of its own state (health(), sync tracking, the sync-failure policy, waitForCacheSync), read from the reflector's events.
  health: ['core', 'listwatch', 'reflector'],
  // Read-your-writes waiters: "the cache holds this write", "the cache caught up with this resource version".
  observed: ['core'],
  informer: ['core', 'observability', 'runtime', 'listwatch', 'reflector', 'fifo', 'store', 'mutation', 'health', 'observed'],
  workqueue: ['core', 'observability', 'runtime'],
  leaderelection: ['core', 'observability', 'runtime'],
  sharding: ['core', 'observability', 'runtime', 'listwatch', 'informer'],
  controller: ['core', 'observability', 'runtime', 'listwatch', 'store', 'informer', 'workqueue', 'leaderelection', 'sharding'],
  // The top floor: runs controllers in production (manager, probes, metrics, Events, drift audit); the manager installs CRDs (crd/ensure.ts only, below).
  operations: ['core', 'observability', 'runtime', 'listwatch', 'informer', 'workqueue', 'leaderelection', 'controller', 'sharding', 'crd'],
  // kube-informer/crd: custom resources defined once (TypeBox); installs CRDs through listwatch's ResourceClient.
  crd: ['core', 'listwatch'],
  // The webhook server (admission, conversion, registration manifests): `kube-informer/webhook`; the root does not import it.
  // crd: the types of a definition for defaultingWebhook/validationWebhook (type-only: the definition's own
  // validate() does the work, so kube-informer/webhook loads neither TypeBox nor yaml at run time);
  // listwatch: the ResourceClient that applies the webhook configurations at start (as crd installs CRDs).
  webhook: ['core', 'observability', 'runtime', 'workqueue', 'listwatch', 'crd'],
  // kube-informer/envtest: etcd and kube-apiserver for a test (child processes, a reaper); the root does not import it.
  // crd: its CRDs are read and installed through the crd room's one path (crd/ensure.ts and crd/files.ts only, below).
  envtest: ['core', 'crd'],
  // crd: the fake API server validates custom resources with the library's validator (crd/validate.ts only, below).
  testing: ['core', 'observability', 'runtime', 'listwatch', 'reflector', 'fifo', 'store', 'mutation', 'health', 'observed', 'informer', 'workqueue', 'leaderelection', 'sharding', 'controller', 'operations', 'crd'],
  // The `kube-informer` command (bin): parses the arguments and loads the work of crd/, webhook/, operations/ or envtest/ (their command files only, CONTRACTS) when asked for.
  cli: ['core', 'crd', 'webhook', 'operations', 'envtest'],
};

/**
 * Files another room may import although the room's index.ts does not re-export them (the index of
 * some rooms is a public entry point, which must not grow internals).
 */
const SHARED_INTERNALS = {
  // The work behind the command's subcommands: not part of the public entry points (kube-informer/crd, /webhook, /envtest).
  crd: ['cli.ts'],
  webhook: ['cli.ts'],
  envtest: ['command.ts'],
  operations: ['rbac-cli.ts'],
  // The elector's option rules, which runWhileLeading extends (controller/leader.ts); not part of kube-informer/leaderelection.
  leaderelection: ['elector.ts'],
};

/**
 * Narrower doors for some pairs of rooms: room -> (imported room -> the only files it may import
 * there). The reflector depends on the ListerWatcher contract, never on the transport or the decoder.
 * The manager installs CRDs through crd/ensure.ts alone, so kube-informer/operations never loads
 * TypeBox, YAML or the command; envtest through crd/ensure.ts and the YAML reader crd/files.ts, so
 * kube-informer/envtest never loads TypeBox or the command; the fake API server validates through
 * crd/validate.ts alone, so kube-informer/testing does not either. The command reaches each room
 * through its command file alone.
 */
const CONTRACTS = {
  reflector: { listwatch: ['index.ts', 'types.ts', 'errors.ts'] },
  operations: { crd: ['ensure.ts'] },
  envtest: { crd: ['ensure.ts', 'files.ts'] },
  testing: { crd: ['validate.ts'] },
  // The command reaches each room through its command file alone, so `kube-informer envtest` loads neither TypeBox nor the webhook server.
  cli: { crd: ['cli.ts'], webhook: ['cli.ts'], operations: ['rbac-cli.ts'], envtest: ['command.ts'] },
};

/** The package's entry points at the top of src/ (they import room barrels only). */
const ENTRY_POINTS = ['index.ts', 'cache.ts', 'controller.ts', 'objects.ts'];

const esc = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** The files a room's index.ts re-exports (`export ... from './x.js'`), as paths relative to the room. */
function doorsOf(srcDir, room) {
  const index = path.join(srcDir, room, 'index.ts');
  const doors = ['index.ts'];
  if (!fs.existsSync(index)) return doors;
  const text = fs.readFileSync(index, 'utf8');
  for (const m of text.matchAll(/\bfrom\s+'\.\/([^']+)\.js'/g)) doors.push(`${m[1]}.ts`);
  return doors;
}

/**
 * The forbidden rules for the src/ tree under `baseDir`.
 * @param {string} baseDir the folder that holds src/ (paths in the rules are relative to it)
 */
function forbiddenRules(baseDir) {
  const srcDir = path.join(baseDir, 'src');
  const rooms = Object.keys(ROWS);
  const rules = [];
  for (const room of rooms) {
    const allowed = [room, ...ROWS[room]];
    rules.push({
      name: `import-table-${room}`,
      comment: `${room}/ imports only ${ROWS[room].length ? ROWS[room].join(', ') : 'nothing'} (CONTRIBUTING.md, "Layout")`,
      severity: 'error',
      from: { path: `^src/${room}/` },
      to: { path: '^src/', pathNot: allowed.map((r) => `^src/${r}/`) },
    });
    const doors = [...doorsOf(srcDir, room), ...(SHARED_INTERNALS[room] ?? [])];
    rules.push({
      name: `no-side-door-${room}`,
      comment: `another room imports ${room}/ only through the files its index.ts re-exports (its contract)`,
      severity: 'error',
      from: { path: '^src/', pathNot: `^src/${room}/` },
      to: { path: `^src/${room}/`, pathNot: `^src/${room}/(${doors.map(esc).join('|')})$` },
    });
  }
  for (const [room, targets] of Object.entries(CONTRACTS)) {
    for (const [target, files] of Object.entries(targets)) {
      rules.push({
        name: `contract-${room}-${target}`,
        comment: `${room}/ imports ${target}/ only through ${files.join(', ')}`,
        severity: 'error',
        from: { path: `^src/${room}/` },
        to: { path: `^src/${target}/`, pathNot: `^src/${target}/(${files.map(esc).join('|')})$` },
      });
    }
  }
  rules.push(
    {
      name: 'unknown-room',
      comment: 'every folder under src/ is a room with a row in the table (.dependency-cruiser.cjs ROWS)',
      severity: 'error',
      from: { path: '^src/', pathNot: [...rooms.map((r) => `^src/${r}/`), ...ENTRY_POINTS.map((f) => `^src/${esc(f)}$`)] },
      to: {},
    },
    {
      name: 'entry-point-imports-barrels',
      comment: 'an entry point (src/index.ts, src/cache.ts, src/controller.ts, src/objects.ts) imports room barrels only',
      severity: 'error',
      from: { path: ENTRY_POINTS.map((f) => `^src/${esc(f)}$`) },
      to: { path: '^src/', pathNot: '^src/[^/]+/index\\.ts$' },
    },
    {
      name: 'no-circular',
      comment: 'no file circle anywhere `npm run imports` looks: src/, bench/, soak/, scripts/, examples/, test/ (type-only imports included)',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'every import resolves (a resolver that finds nothing would make every rule above pass)',
      severity: 'error',
      from: { path: '^src/' },
      to: { couldNotResolve: true },
    },
  );
  return rules;
}

module.exports = {
  // The tree checked is the one in the working directory (npm runs scripts from the package root).
  forbidden: forbiddenRules(process.cwd()),
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^(node_modules|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // exportsFields + conditionNames: packages that resolve only through "exports" with an "import" condition (typebox 1.x).
    enhancedResolveOptions: { extensions: ['.ts', '.d.ts', '.js'], conditionNames: ['import', 'require', 'node', 'default'], exportsFields: ['exports'] },
  },
};

// The table, for the name check of test/package/barrel-names.test.ts (a room's file imported from
// another room gives only names its barrel exports). Not enumerable: not part of dependency-cruiser's configuration.
Object.defineProperty(module.exports, 'table', { value: { ROWS, SHARED_INTERNALS, CONTRACTS, ENTRY_POINTS } });
