// The images the real node needs besides the product's own: the sandbox (pause) image,
// a static C program that sleeps and reaps children, and `demo-web`, a tiny HTTP server
// (busybox httpd) the tests deploy as real workloads. Both are built from scratch with
// buildah on first use and kept in its local storage.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildFromScratch, imageLabel, put } from '../../../scripts/lib/images.ts';
import { PAUSE_IMAGE } from './layout.ts';

/** The workload image: busybox httpd on port 8080 serving /www, as user 65534. */
export const DEMO_WEB_IMAGE = 'aiops.local/demo-web:1';

const PAUSE_C = `#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>
static void quit(int s) { (void)s; _exit(0); }
static void reap(int s) { (void)s; while (waitpid(-1, 0, WNOHANG) > 0) {} }
int main(void) {
  signal(SIGINT, quit);
  signal(SIGTERM, quit);
  signal(SIGCHLD, reap);
  for (;;) pause();
}
`;
const VERSION_LABEL = 'aiops.harness-image';
const PAUSE_VERSION = '1';
const DEMO_WEB_VERSION = '1';

/** Builds PAUSE_IMAGE (gcc -Os -static) unless present. */
export function ensurePauseImage(): void {
  if (imageLabel(PAUSE_IMAGE, VERSION_LABEL) === PAUSE_VERSION) return;
  const dir = mkdtempSync(join(tmpdir(), 'aiops-pause-'));
  try {
    writeFileSync(join(dir, 'pause.c'), PAUSE_C);
    execFileSync('gcc', ['-Os', '-static', '-o', join(dir, 'pause'), join(dir, 'pause.c')], {
      stdio: 'pipe',
    });
    buildFromScratch(
      PAUSE_IMAGE,
      (r) => put(r, join(dir, 'pause'), '/pause', 0o755),
      ['--entrypoint', '["/pause"]'],
      {
        [VERSION_LABEL]: PAUSE_VERSION,
      },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Builds DEMO_WEB_IMAGE (busybox-static httpd) unless present. */
export function ensureDemoWebImage(): void {
  if (imageLabel(DEMO_WEB_IMAGE, VERSION_LABEL) === DEMO_WEB_VERSION) return;
  buildFromScratch(
    DEMO_WEB_IMAGE,
    (r) => {
      put(r, '/bin/busybox', '/bin/busybox', 0o755);
      symlinkSync('busybox', join(r, 'bin/sh'));
      mkdirSync(join(r, 'www'));
      writeFileSync(join(r, 'www/index.html'), 'demo-web\n');
    },
    [
      '--entrypoint',
      '["/bin/busybox", "httpd", "-f", "-p", "8080", "-h", "/www"]',
      '--user',
      '65534:65534',
      '--port',
      '8080',
    ],
    { [VERSION_LABEL]: DEMO_WEB_VERSION },
  );
}
