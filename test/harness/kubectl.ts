// The one way tests and the harness run the real kubectl: against a given kubeconfig, stdout
// back, and on failure an Error carrying kubectl's own stderr (what a person would read).

import { execFileSync } from 'node:child_process';

/** Runs `kubectl <args>`, feeding `input` to stdin when given; returns stdout, throws with stderr. */
export type Kubectl = (args: readonly string[], input?: string) => string;

/** kubectl with `--kubeconfig=<kubeconfig>` before every command. */
export function kubectlWith(kubeconfig: string): Kubectl {
  return (args, input) => {
    try {
      return execFileSync('kubectl', [`--kubeconfig=${kubeconfig}`, ...args], {
        encoding: 'utf8',
        stdio: ['pipe', 'pipe', 'pipe'],
        maxBuffer: 64 * 1024 * 1024,
        ...(input !== undefined ? { input } : {}),
      });
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.join(' ')}: ${(e.stderr ?? e.message).trim()}`, { cause: err });
    }
  };
}
