/**
 * A promise raced against an AbortSignal without leaving anything on the
 * signal: the abort listener goes as soon as either side settles (racing
 * against a long-lived promise instead would keep one reaction per call).
 */

/** `p`, or a rejection with the signal's reason as soon as it aborts (a late failure of `p` is then ignored). */
export function untilAborted<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    p.catch(() => undefined);
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      p.catch(() => undefined);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (e: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(e);
      },
    );
  });
}
