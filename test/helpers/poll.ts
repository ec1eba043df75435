/**
 * Polls fn until it returns a value other than undefined/false, or the
 * deadline passes (then throws with the description and the last error).
 * Tests wait on conditions with this, never on fixed sleeps.
 */
export async function pollUntil<T>(
  description: string,
  fn: () => Promise<T | undefined | false> | T | undefined | false,
  { timeoutMs = 30_000, intervalMs = 50 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined && v !== false) return v;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${description}${lastError ? `; last error: ${lastError instanceof Error ? lastError.message : JSON.stringify(lastError)}` : ''}`,
      );
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
