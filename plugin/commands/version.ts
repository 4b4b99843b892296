// `kubectl aiops version`: the plugin's own version and runtime, and (unless --client)
// the server's Kubernetes version and the AITask API versions it serves, from discovery.

import { GROUP } from '../../api/schema/common.ts';
import pkg from '../../package.json' with { type: 'json' };
import { ExitCode, ifFound } from '../errors.ts';
import { visible } from '../format.ts';
import type { CommandContext } from '../context.ts';

interface APIGroup {
  versions?: { version: string }[];
  preferredVersion?: { version: string };
}

/** Runs `version`. */
export async function version(
  ctx: CommandContext,
  _args: string[],
  opts: Record<string, unknown>,
): Promise<number> {
  const client = {
    pluginVersion: `v${pkg.version}`,
    nodeVersion: process.version,
    platform: `${process.platform}/${process.arch}`,
  };
  const print = (doc: Record<string, unknown>): void => {
    if (ctx.machine) ctx.printDoc(doc);
    else {
      const rows: [string, unknown][] = [
        ['Plugin Version', doc['pluginVersion']],
        ['Node.js Version', `${String(doc['nodeVersion'])} (${String(doc['platform'])})`],
        ...(doc['serverVersion'] !== undefined
          ? ([['Server Version', doc['serverVersion']]] as [string, unknown][])
          : []),
        ...(doc['aitaskVersions'] !== undefined
          ? ([
              [
                'AITask API',
                describeVersions(doc['aitaskVersions'] as string[], doc['aitaskPreferredVersion']),
              ],
            ] as [string, unknown][])
          : []),
      ];
      ctx.io.out(rows.map(([k, v]) => `${`${k}:`.padEnd(17)}${visible(String(v))}\n`).join(''));
    }
  };
  if (opts['client'] === true) {
    print(client);
    return ExitCode.Ok;
  }
  let s;
  try {
    s = await ctx.session();
    const [server, group] = await Promise.all([
      s.transport.request<{ gitVersion?: string }>({ path: '/version' }),
      ifFound(s.transport.request<APIGroup>({ path: `/apis/${GROUP}` })),
    ]);
    print({
      ...client,
      serverVersion: server.gitVersion ?? 'unknown',
      aitaskVersions: group?.versions?.map((v) => v.version) ?? [],
      ...(group?.preferredVersion ? { aitaskPreferredVersion: group.preferredVersion.version } : {}),
    });
    return ExitCode.Ok;
  } catch (err) {
    print(client);
    throw err;
  }
}

function describeVersions(versions: readonly string[], preferred: unknown): string {
  if (versions.length === 0) return `not installed (no ${GROUP} API on this server)`;
  return `${GROUP} ${versions.map((v) => (v === preferred ? `${v} (preferred)` : v)).join(', ')}`;
}
