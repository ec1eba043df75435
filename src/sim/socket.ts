/**
 * Unix socket endpoints: parsing `unix:///abs/path` (also `unix:/abs`,
 * `unix://rel` is rejected) and replacing a stale socket file before binding.
 */
import { lstatSync, unlinkSync } from 'node:fs';
import type { Server } from 'node:net';

/** The filesystem path of a unix endpoint (`unix:///p`, `unix:/p` or a bare absolute path). */
export function unixPath(endpoint: string): string {
  let p = endpoint;
  if (p.startsWith('unix://')) p = p.slice('unix://'.length);
  else if (p.startsWith('unix:')) p = p.slice('unix:'.length);
  if (!p.startsWith('/')) throw new Error(`bad endpoint "${endpoint}": want unix:///absolute/path.sock`);
  if (Buffer.byteLength(p) > 107) throw new Error(`socket path "${p}" is longer than 107 bytes (the unix socket limit)`);
  return p;
}

/** Removes `path` if it is a socket (left by a previous run); refuses to touch anything else. */
export function removeStaleSocket(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch {
    return;
  }
  if (!st.isSocket()) throw new Error(`refusing to replace "${path}": it exists and is not a socket`);
  unlinkSync(path);
}

export function listenUnix(server: Server, path: string): Promise<void> {
  removeStaleSocket(path);
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(path, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
