/**
 * A containerd of the test's own (scripts/containerd.sh with its own dirs,
 * socket, bridge and pod CIDR), for tests that stop the runtime or need one no
 * other agent touches. Stop it with down() in afterAll.
 */
import { execFile } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);
const SCRIPT = join(resolve(fileURLToPath(import.meta.url), '../../..'), 'scripts/containerd.sh');

export class PrivateContainerd {
  readonly env: NodeJS.ProcessEnv;
  readonly endpoint: string;
  /** containerd's root (content store, snapshots: the image filesystem). */
  readonly rootDir: string;
  private readonly runDir: string;
  private readonly rootBytes: number | undefined;

  /**
   * tag: a short name (a-z0-9, ≤ 8 chars); cidrOctet: the second octet of its 10.x.0.0/16 pod network.
   * confTemplate: no network at start, only a CNI conf_template rendered with the pod CIDR the kubelet sends.
   * rootBytes: containerd's root on a tmpfs of this size (a small image filesystem; `down` unmounts it).
   */
  constructor(tag: string, cidrOctet: number, o: { confTemplate?: boolean; rootBytes?: number } = {}) {
    this.runDir = `/run/kts-e2e-${tag}`;
    this.rootDir = `/var/lib/kts-e2e-${tag}/root`;
    this.rootBytes = o.rootBytes;
    this.env = {
      ...process.env,
      KTS_CONTAINERD_DIR: `/var/lib/kts-e2e-${tag}`,
      KTS_CONTAINERD_RUN: this.runDir,
      KTS_CNI_BRIDGE: `ktse${tag}`.slice(0, 15),
      KTS_POD_CIDR: `10.${cidrOctet}.0.0/16`,
      KTS_CNI_CONF_TEMPLATE: o.confTemplate ? '1' : '0',
    };
    this.endpoint = `unix://${this.runDir}/containerd.sock`;
  }

  private async script(cmd: string): Promise<string> {
    const { stdout } = await run('bash', [SCRIPT, cmd], { env: this.env, maxBuffer: 16 * 1024 * 1024 });
    return stdout.trim();
  }

  /** Starts it (or restarts it with its old state after stop()). */
  async up(): Promise<string> {
    if (this.rootBytes !== undefined && !isMountPoint(this.rootDir)) {
      mkdirSync(this.rootDir, { recursive: true });
      await run('mount', ['-t', 'tmpfs', '-o', `size=${this.rootBytes}`, 'tmpfs', this.rootDir]);
    }
    await this.script('up');
    return this.endpoint;
  }

  /** Imports an OCI image tarball (scripts/build-oci-image.mjs) into the CRI namespace with the configured snapshotter. */
  async importImage(tar: string): Promise<void> {
    const config = readFileSync(join(this.rootDir, '../config.toml'), 'utf8');
    const snapshotter = /^\s*snapshotter = "(.*)"/m.exec(config)?.[1] ?? 'overlayfs';
    const address = this.endpoint.slice('unix://'.length);
    await run('ctr', ['--address', address, '-n', 'k8s.io', 'images', 'import', '--snapshotter', snapshotter, tar], { timeout: 60_000 });
  }

  /**
   * Stops the daemon only (SIGTERM, or `signal`: SIGKILL for a crash), leaving its state and running
   * containers, as a runtime crash or restart would. Returns its pid (wait for it to be gone before up()).
   */
  stop(signal: NodeJS.Signals = 'SIGTERM'): number {
    const pid = Number(readFileSync(join(this.runDir, 'containerd.pid'), 'utf8').trim());
    process.kill(pid, signal);
    return pid;
  }

  /** Removes every pod, stops it and deletes its state. */
  async down(): Promise<void> {
    try {
      await this.script('down');
    } finally {
      // The script unmounts everything under its dirs; this only covers a down that failed early.
      if (this.rootBytes !== undefined && isMountPoint(this.rootDir)) await run('umount', ['-l', this.rootDir]).catch(() => undefined);
    }
  }
}

function isMountPoint(dir: string): boolean {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .some((l) => l.split(' ')[4] === dir);
}
