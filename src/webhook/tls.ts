// The webhook server's certificate: files polled and swapped in without a restart (cert-manager rotation), or a generated self-signed CA.

import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import type { Server } from 'node:https';
import { ErrorCodes, InvalidOptionError, KubeInformerError, type Clock, type ClockTimer, type Logger } from '../core/index.js';
import { generateSelfSignedCertificates, type SelfSignedOptions } from './x509.js';

/** Certificate and key files (PEM), e.g. a mounted cert-manager Secret's `tls.crt` and `tls.key`. */
export interface WebhookTlsFiles {
  /** The serving certificate (chain), PEM. Required. */
  certFile: string;
  /** Its private key, PEM. Required. */
  keyFile: string;
  /** The CA that signed it (e.g. the Secret's `ca.crt`), for {@link WebhookServer.caBundle}. Default: none. */
  caFile?: string;
  /**
   * How often the files are re-read; a changed pair is served to new connections without a restart
   * (controller-runtime's certwatcher polls every 10 s too). Default: 10 000.
   */
  pollIntervalMs?: number;
}

/** A generated self-signed CA and serving certificate (development and tests): the CA is {@link WebhookServer.caBundle}. */
export interface WebhookTlsSelfSigned {
  /** `true`, or the hosts and validity of the generated certificate. */
  selfSigned: true | SelfSignedOptions;
}

/** Where the webhook server's certificate comes from. */
export type WebhookTlsOptions = WebhookTlsFiles | WebhookTlsSelfSigned;

interface Pair {
  cert: string;
  key: string;
}

/** Loads, watches and reloads the certificate of one server. */
export class TlsSource {
  #options: WebhookTlsOptions;
  #clock: Clock;
  #logger: Logger;
  #current: Pair | undefined;
  #caBundle: string | undefined;

  constructor(options: WebhookTlsOptions, clock: Clock, logger: Logger) {
    if ('selfSigned' in options) {
      const generated = generateSelfSignedCertificates(options.selfSigned === true ? {} : options.selfSigned);
      this.#current = { cert: generated.cert, key: generated.key };
      this.#caBundle = generated.caBundle;
    } else if (typeof options.certFile !== 'string' || typeof options.keyFile !== 'string') {
      throw new InvalidOptionError('WebhookServer: option tls needs certFile and keyFile, or selfSigned');
    }
    this.#options = options;
    this.#clock = clock;
    this.#logger = logger;
  }

  /** The CA bundle, base64: the generated CA, or `caFile`'s contents once loaded. */
  caBundle(): string | undefined {
    return this.#caBundle;
  }

  /** The first certificate; rejects with `WEBHOOK_SERVE` when the files cannot be read or do not match. */
  async load(): Promise<Pair> {
    if ('selfSigned' in this.#options) return this.#current!;
    try {
      const pair = await this.#read();
      createSecureContext(pair);
      this.#current = pair;
      if (this.#options.caFile !== undefined) this.#caBundle = (await readFile(this.#options.caFile)).toString('base64');
      return pair;
    } catch (err) {
      throw new KubeInformerError(ErrorCodes.WEBHOOK_SERVE, `WebhookServer: cannot load the certificate ${this.#options.certFile} / key ${this.#options.keyFile}: ${(err as Error).message}`, { cause: err });
    }
  }

  /** Polls the files every `pollIntervalMs` and reloads on change; returns the function that stops it. */
  watch(server: Server): () => void {
    if ('selfSigned' in this.#options) return () => {};
    const interval = this.#options.pollIntervalMs ?? 10_000;
    let timer: ClockTimer | undefined;
    let stopped = false;
    const tick = (): void => {
      void this.reload(server).finally(() => {
        if (!stopped) timer = this.#clock.setTimeout(tick, interval);
      });
    };
    timer = this.#clock.setTimeout(tick, interval);
    return () => {
      stopped = true;
      if (timer) this.#clock.clearTimeout(timer);
    };
  }

  /** Re-reads the files; a changed, valid pair is served to new connections. A bad pair is logged and the old one kept. */
  async reload(server: Server): Promise<boolean> {
    if ('selfSigned' in this.#options) return false;
    let pair: Pair;
    try {
      pair = await this.#read();
    } catch (err) {
      this.#logger.warn(`WebhookServer: cannot read the certificate files (keeping the served one): ${(err as Error).message}`);
      return false;
    }
    if (pair.cert === this.#current?.cert && pair.key === this.#current.key) return false;
    try {
      server.setSecureContext(pair); // validates: a key that does not match the certificate throws
    } catch (err) {
      // cert-manager writes the two files one after the other: a mismatch is usually half a rotation.
      this.#logger.warn(`WebhookServer: the new certificate and key do not load (keeping the served one): ${(err as Error).message}`);
      return false;
    }
    this.#current = pair;
    if (this.#options.caFile !== undefined) {
      try {
        this.#caBundle = (await readFile(this.#options.caFile)).toString('base64');
      } catch (err) {
        this.#logger.warn(`WebhookServer: cannot read ${this.#options.caFile}: ${(err as Error).message}`);
      }
    }
    this.#logger.info(`WebhookServer: serving a new certificate from ${this.#options.certFile}`);
    return true;
  }

  async #read(): Promise<Pair> {
    const files = this.#options as WebhookTlsFiles;
    const [cert, key] = await Promise.all([readFile(files.certFile, 'utf8'), readFile(files.keyFile, 'utf8')]);
    return { cert, key };
  }
}
