/**
 * kubelet-ts's version (package.json) and the version it reports to the cluster
 * as nodeInfo.kubeletVersion: the upstream kubelet release whose behaviour it is
 * compared with and tested against (v1.20.2), with kubelet-ts's own version as
 * semver build metadata, e.g. "v1.20.2+kubelet-ts-0.1.0".
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

import { UPSTREAM_COMPAT_VERSION } from './upstream-version.js';

export { UPSTREAM_COMPAT_VERSION };

let cachedVersion: string | undefined;

/** The version in kubelet-ts's package.json (found by walking up from this module, in src/ or dist/). */
export function packageVersion(): string {
  if (cachedVersion !== undefined) return cachedVersion;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, 'package.json');
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, 'utf8')) as { name?: string; version?: string };
      if (pkg.name === 'kubelet-ts' && pkg.version) return (cachedVersion = pkg.version);
    }
    const parent = path.dirname(dir);
    if (parent === dir) return (cachedVersion = '0.0.0-unknown');
    dir = parent;
  }
}

export function kubeletVersion(): string {
  return `${UPSTREAM_COMPAT_VERSION}+kubelet-ts-${packageVersion()}`;
}
