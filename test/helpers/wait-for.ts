import { pollUntil } from './poll.js';

/**
 * Polls `cond` until it returns a truthy value (returned) or `timeoutMs`
 * passes (throws, naming `what`). A truthy-value flavour of pollUntil.
 */
export async function waitFor<T>(
  cond: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  return pollUntil(opts.what ?? 'a condition', async () => (await cond()) || undefined, {
    timeoutMs: opts.timeoutMs ?? 10_000,
    intervalMs: opts.intervalMs ?? 10,
  });
}
