/**
 * Polls `cond` until it returns a truthy value (returned) or `timeoutMs`
 * passes (throws, naming `what`). For tests only: real timers are fine here.
 */
export async function waitFor<T>(
  cond: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 10_000;
  const intervalMs = opts.intervalMs ?? 10;
  const deadline = Date.now() + timeoutMs;
  let lastErr: unknown;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v as NonNullable<T>;
    } catch (err) {
      lastErr = err;
    }
    if (Date.now() > deadline) {
      const why = lastErr instanceof Error ? `: last error: ${lastErr.message}` : '';
      throw new Error(`waitFor timed out after ${timeoutMs} ms${opts.what ? ` waiting for ${opts.what}` : ''}${why}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
