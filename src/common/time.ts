/** Kubernetes wire timestamps. */

/** metav1.Time: RFC3339, seconds precision, UTC ("2026-11-23T01:02:03Z"). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** metav1.MicroTime: RFC3339 with microseconds ("2026-11-23T01:02:03.123000Z"). */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** Milliseconds since the epoch with sub-millisecond precision, comparable across threads. */
export function epochHiRes(): number {
  return performance.timeOrigin + performance.now();
}
