// One way to run a command whose failure must say why: used by the image builds, the real
// node's network setup and the OLM install, which all shell out to system tools.
import { execFileSync } from 'node:child_process';

/**
 * Runs `cmd args` (with `input` on stdin when given) and returns its stdout. On a non-zero
 * exit throws an Error naming the command and the last 5 lines of its stderr (the original
 * error as `cause`). No retries; stdout is buffered up to 64 MiB.
 */
export function run(cmd: string, args: readonly string[], input?: string): string {
  try {
    return execFileSync(cmd, args, {
      encoding: 'utf8',
      stdio: ['pipe', 'pipe', 'pipe'],
      maxBuffer: 64 << 20,
      ...(input !== undefined ? { input } : {}),
    });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    const why = (e.stderr || e.message).trim().split('\n').slice(-5).join(' | ');
    throw new Error(`${cmd} ${args.join(' ')}: ${why}`, { cause: err });
  }
}
