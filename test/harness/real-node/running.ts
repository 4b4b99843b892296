// Finds the real node of the persistent cluster (`npm run cluster -- up --real-node`), so
// `npm run image` can load what it builds into that node's containerd.
import { persistentClusterDir } from '../paths.ts';
import { componentLiveness, readState } from '../state.ts';
import { nodePaths } from './layout.ts';

/** containerd socket of the persistent cluster's real node, if that cluster runs one. */
export async function runningRealNodeSocket(): Promise<string | undefined> {
  const dir = persistentClusterDir();
  const state = await readState(dir);
  if (state?.realNode !== true || !componentLiveness(state).every((c) => c.running)) return undefined;
  return nodePaths(dir).containerdSocket;
}
