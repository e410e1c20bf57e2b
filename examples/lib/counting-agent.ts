// A keep-alive HTTPS agent for a KubeConfig's cluster that counts the bytes the server sent on its connections.
//
// Not run on its own: the sharded examples pass it to their informers (`agent`) and print `bytesRead()`,
// which is how the sharded-replica tests measure what server-side filtering saves.

import https from 'node:https';
import type net from 'node:net';
import type { KubeConfig } from '@kubernetes/client-node';

/** An agent with the KubeConfig's TLS settings; `bytesRead()` sums every connection it opened, open or closed. */
export class CountingAgent extends https.Agent {
  readonly #sockets = new Set<net.Socket>();
  #closedBytes = 0;

  /** The agent for `kc`'s current cluster (its CA, client certificate and key). */
  static async for(kc: KubeConfig): Promise<CountingAgent> {
    const tls: https.RequestOptions = {};
    await kc.applyToHTTPSOptions(tls);
    return new CountingAgent({ keepAlive: true, ca: tls.ca, cert: tls.cert, key: tls.key, rejectUnauthorized: tls.rejectUnauthorized });
  }

  override createConnection(...args: Parameters<https.Agent['createConnection']>): ReturnType<https.Agent['createConnection']> {
    const socket = super.createConnection(...args) as net.Socket;
    this.#sockets.add(socket);
    socket.once('close', () => {
      this.#closedBytes += socket.bytesRead;
      this.#sockets.delete(socket);
    });
    return socket;
  }

  /** Bytes received on every connection so far. */
  bytesRead(): number {
    let n = this.#closedBytes;
    for (const s of this.#sockets) n += s.bytesRead;
    return n;
  }
}
