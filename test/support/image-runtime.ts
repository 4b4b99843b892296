// How the operator's image runs Node, read from the Dockerfile itself, so that a test or a
// benchmark runs the operator with exactly the image's Node flags and environment (its young
// generation and malloc settings change how much memory a process keeps resident).

/**
 * How the image's runtime stage runs Node (after the last `FROM`): its `ENV` lines and the
 * Node flags its `ENTRYPOINT ["node", <flags…>, <script>]` passes before the script.
 */
export function imageRuntime(dockerfile: string): { env: Record<string, string>; nodeFlags: string[] } {
  const stage = dockerfile.slice(dockerfile.lastIndexOf('\nFROM '));
  const env: Record<string, string> = {};
  for (const m of stage.matchAll(/^ENV\s+(\w+)=("([^"]*)"|\S+)\s*$/gm))
    env[m[1] as string] = m[3] ?? (m[2] as string);
  const entrypoint = /^ENTRYPOINT\s+(\[.*\])\s*$/m.exec(stage)?.[1];
  const argv = entrypoint === undefined ? [] : (JSON.parse(entrypoint) as string[]);
  const nodeFlags = argv[0] === 'node' ? argv.slice(1).filter((a) => a.startsWith('--')) : [];
  return { env, nodeFlags };
}
