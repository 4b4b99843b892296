// "Skip locally, fail where required": a suite that cannot run on this machine skips with the
// reason, unless an environment variable says the machine must run it (CI sets
// AIOPS_REQUIRE_REAL_NODE and AIOPS_REQUIRE_VALIDATORS), in which case the missing piece is a
// failure naming what is missing — so a CI run never turns a suite into a green skip.

/** CI's variable for the real node, OLM and the arm64 emulator. */
export const REQUIRE_REAL_NODE = 'AIOPS_REQUIRE_REAL_NODE';

/**
 * `why` as a skip reason (undefined when there is nothing missing); throws `why` instead
 * when `variable` is set to anything but the empty string.
 */
export function skipUnlessRequired(variable: string, why: string | undefined): string | undefined {
  if (why === undefined) return undefined;
  if (process.env[variable]) throw new Error(`${variable} is set and ${why}`);
  return `${why}; set ${variable}=1 to make this a failure`;
}
