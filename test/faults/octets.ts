/**
 * The second octets of the private containerds' pod networks (10.N.0.0/16): one per containerd the suite
 * brings up, so that suites run side by side by different people never share a bridge or a network. Taken
 * from --octets or KTS_FAULT_OCTETS ("182,183,184"), else the fallback.
 */
export const FAULT_OCTETS_ENV = 'KTS_FAULT_OCTETS';

export function parseOctets(text: string, where = FAULT_OCTETS_ENV): number[] {
  const octets = text
    .split(',')
    .map((t) => t.trim())
    .filter(Boolean)
    .map(Number);
  const bad = octets.find((n) => !Number.isInteger(n) || n < 1 || n > 254);
  if (octets.length === 0 || bad !== undefined)
    throw new Error(`${where}="${text}": expected comma-separated octets 1-254 (pod networks 10.N.0.0/16), e.g. 182,183,184`);
  return octets;
}

/** The octets the environment names, else `fallback`. */
export function faultOctets(fallback: number[], env: NodeJS.ProcessEnv = process.env): number[] {
  const v = env[FAULT_OCTETS_ENV];
  return v ? parseOctets(v) : fallback;
}
