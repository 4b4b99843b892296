// Serving certificate handling: read cert and key from files (where OLM and the plain
// manifests mount them) and swap the TLS context in place when they change, so a
// rotated certificate is served without a restart.

import { readFileSync, unwatchFile, watchFile } from 'node:fs';
import { join } from 'node:path';

/** Where OLM mounts the webhook's serving certificate. */
export const DEFAULT_CERT_DIR = '/tmp/k8s-webhook-server/serving-certs';

export interface CertPaths {
  certFile: string;
  keyFile: string;
}

/** `tls.crt` and `tls.key` inside `dir`. */
export function certPathsIn(dir: string): CertPaths {
  return { certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key') };
}

/** Reads the pair; throws an Error naming the file that is missing or unreadable. */
export function readCertPair(paths: CertPaths): { cert: Buffer; key: Buffer } {
  const read = (file: string, what: string) => {
    try {
      return readFileSync(file);
    } catch (err) {
      const why = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      throw new Error(`cannot read the serving ${what} ${file}: ${why}`, { cause: err });
    }
  };
  return { cert: read(paths.certFile, 'certificate'), key: read(paths.keyFile, 'key') };
}

/**
 * Polls both files every `intervalMs` (default 1000 ms; polling, because Kubernetes
 * updates mounted Secrets by swapping symlinks, which fs.watch misses) and calls
 * `onChange` with the new pair once both are readable. Returns a function that stops it.
 */
export function watchCertPair(
  paths: CertPaths,
  onChange: (pair: { cert: Buffer; key: Buffer }) => void,
  onError: (err: Error) => void,
  intervalMs = 1000,
): () => void {
  const listener = () => {
    try {
      onChange(readCertPair(paths));
    } catch (err) {
      onError(err as Error);
    }
  };
  watchFile(paths.certFile, { interval: intervalMs }, listener);
  watchFile(paths.keyFile, { interval: intervalMs }, listener);
  return () => {
    unwatchFile(paths.certFile, listener);
    unwatchFile(paths.keyFile, listener);
  };
}

/**
 * Whether a failed TLS handshake (Node's `tlsClientError` code) is the client refusing the
 * served certificate: a TLS alert bad_certificate (what Go clients such as the kube-apiserver
 * send when verification fails), certificate_unknown, certificate_expired or unknown_ca
 * (OpenSSL clients). Other handshake failures (a port scan, a protocol mismatch) are not.
 */
export function isCertificateRejection(code: string | undefined): boolean {
  return (
    code !== undefined &&
    /_ALERT_(BAD_CERTIFICATE|CERTIFICATE_UNKNOWN|CERTIFICATE_EXPIRED|UNKNOWN_CA)$/.test(code)
  );
}
