// Go-style duration strings (`90s`, `5m`, `1h30m`) as v1alpha1 spells its interval,
// to and from whole seconds as v1 and v2 spell it.

const PATTERN = /^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/;

/** Seconds in `text`, or undefined when it is not an h/m/s duration. */
export function parseDuration(text: string): number | undefined {
  const m = PATTERN.exec(text);
  if (!m || text === '') return undefined;
  return Number(m[1] ?? 0) * 3600 + Number(m[2] ?? 0) * 60 + Number(m[3] ?? 0);
}

/** The canonical duration string for whole `seconds` (e.g. 90 → `1m30s`, 3600 → `1h`, 0 → `0s`). */
export function formatDuration(seconds: number): string {
  const h = Math.floor(seconds / 3600);
  const m = Math.floor((seconds % 3600) / 60);
  const s = seconds % 60;
  const out = `${h ? `${h}h` : ''}${m ? `${m}m` : ''}${s ? `${s}s` : ''}`;
  return out === '' ? '0s' : out;
}
