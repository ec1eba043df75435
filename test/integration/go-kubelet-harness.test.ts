/**
 * The Go kubelet harness (bench/lib/go-kubelet.ts) on its failure path: a
 * missing binary is a clear error and leaves nothing behind. Its normal path
 * runs in test/e2e/compare-go-kubelet-containerd.test.ts.
 */
import { existsSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { GoKubelet } from '../../bench/lib/go-kubelet.js';

describe('GoKubelet', () => {
  it('a missing binary is a clear error and removes the temp dir', async () => {
    const g = new GoKubelet({ endpoint: 'unix:///nonexistent/cri.sock', nodeName: 'n', namespace: 'ns', bin: '/nonexistent/kubelet' });
    expect(existsSync(g.pki.caCert)).toBe(true);
    await expect(g.start()).rejects.toThrow(
      /the Go kubelet is not at \/nonexistent\/kubelet: build it with 'sudo bash scripts\/control-plane.sh build'/,
    );
    expect(existsSync(g.dir)).toBe(false);
  });

  it('a process that exits at once fails start() fast with its output, and is cleaned up', async () => {
    const g = new GoKubelet({ endpoint: 'unix:///nonexistent/cri.sock', nodeName: 'n', namespace: 'ns', bin: '/bin/false' });
    const t = Date.now();
    await expect(g.start()).rejects.toThrow(/the Go kubelet exited \(1\)/);
    expect(Date.now() - t).toBeLessThan(30_000);
    expect(existsSync(g.dir)).toBe(false);
  });
});
