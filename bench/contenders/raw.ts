// Contender (a): the raw baseline — HTTP stream, split lines, JSON.parse, Map.set. The floor for any JavaScript informer.
//
// It sends the requests an informer sends (first list at resourceVersion 0 with limit 500, following
// `continue`; then a watch from the list's version with bookmarks) and does nothing else: no
// validation, no queue, no handlers, no resourceVersion bookkeeping beyond watching again from the
// last version seen when the server ends the watch (and listing again after an ERROR).
// `metadataOnly` (contender `raw-meta`) asks for PartialObjectMetadata with client-go's Accept header.

import http from 'node:http';
import https from 'node:https';
import { runContender } from '../lib/contender.js';
import { serverAccess, stream, type ServerAccess } from '../lib/real-http.js';

const LIST_ACCEPT_META = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
const WATCH_ACCEPT_META = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

interface Obj {
  metadata: { name: string; namespace?: string; resourceVersion?: string };
}


async function readAll(res: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of res as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

await runContender(async (cfg, hooks) => {
  const cache = new Map<string, Obj>();
  // The fake server: plain HTTP with a bearer token; a kubeconfig (the real kube-apiserver): its TLS and auth.
  const access: ServerAccess = cfg.kubeconfig !== undefined ? await serverAccess(cfg.kubeconfig) : { server: cfg.url, options: { headers: { Authorization: `Bearer ${cfg.token}` } } };
  const base = cfg.namespace === undefined ? '/api/v1/pods' : `/api/v1/namespaces/${cfg.namespace}/pods`;
  // An agent of its own, keep-alive as the clients' are, without the 5 s socket timeout of Node's global
  // agent (Node 19 and later).
  const agent = new (access.server.startsWith('https:') ? https : http).Agent({ keepAlive: true });
  const get = (path: string, accept: string): Promise<http.IncomingMessage> => stream(access, agent, path, accept);
  const key = (o: Obj): string => `${o.metadata.namespace ?? ''}/${o.metadata.name}`;

  async function list(): Promise<string> {
    const first = cfg.listRv === undefined ? 'resourceVersion=0' : `resourceVersion=${cfg.listRv}&resourceVersionMatch=Exact`;
    let query = `${first}&limit=500`;
    for (;;) {
      const res = await get(`${base}?${query}`, cfg.metadataOnly ? LIST_ACCEPT_META : 'application/json');
      const page = JSON.parse(await readAll(res)) as { metadata: { resourceVersion: string; continue?: string }; items: Obj[] };
      for (const item of page.items) cache.set(key(item), item);
      if (!page.metadata.continue) return page.metadata.resourceVersion;
      query = `limit=500&continue=${encodeURIComponent(page.metadata.continue)}`;
    }
  }

  // A server may end a watch at any time, and on a loaded machine kube-apiserver ended raw's partway
  // (2026-11-28; the informers watch again without a word, so only raw stopped short). Raw does the
  // least any client must do: it watches again from the last version it saw, and lists again after an
  // ERROR (410 Expired). Each is said on stderr. Per event that costs one more property read.
  let watchesEnded = 0;
  async function watch(rv: string): Promise<void> {
    const url = `${base}?watch=1&resourceVersion=${rv}&allowWatchBookmarks=true&timeoutSeconds=3600`;
    const res = await get(url, cfg.metadataOnly ? WATCH_ACCEPT_META : 'application/json');
    res.setEncoding('utf8');
    let partial = '';
    let lastRv = rv;
    let expired = false;
    res.on('data', (chunk: string) => {
      let text = partial + chunk;
      let nl = text.indexOf('\n');
      let from = 0;
      while (nl !== -1) {
        const ev = JSON.parse(text.slice(from, nl)) as { type: string; object: Obj };
        if (ev.type === 'ERROR') expired = true;
        else {
          lastRv = ev.object.metadata.resourceVersion ?? lastRv;
          if (ev.type === 'DELETED') cache.delete(key(ev.object));
          else if (ev.type !== 'BOOKMARK') {
            cache.set(key(ev.object), ev.object);
            if (ev.type === 'MODIFIED') hooks.modified(0);
          }
        }
        from = nl + 1;
        nl = text.indexOf('\n', from);
      }
      partial = text.slice(from);
      text = '';
    });
    res.on('end', () => {
      watchesEnded++;
      process.stderr.write(`raw: the server ended the watch (${watchesEnded} so far)${expired ? ' with an ERROR: listing again' : `; watching again from ${lastRv}`}\n`);
      (expired ? list() : Promise.resolve(lastRv)).then(watch).catch((err: unknown) => hooks.error(err));
    });
    res.on('error', (err) => {
      process.stderr.write(`raw: the watch failed: ${err.message}\n`);
      hooks.error(err);
    });
  }

  const synced = (async () => {
    const rv = await list();
    await watch(rv);
  })();
  return { synced, size: () => cache.size };
});
