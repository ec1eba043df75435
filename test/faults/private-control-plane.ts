/**
 * A control plane of the fault suite's own (scripts/control-plane.sh with its
 * own state dir and ports: KTS_CP_DIR, KTS_ETCD_PORT, KTS_ETCD_PEER_PORT,
 * KTS_APISERVER_PORT), so that apiserver restarts and etcd compactions hit no
 * one else; the shared control plane is never touched. It needs root and the
 * built binaries (`bash scripts/control-plane.sh build`).
 */
import { execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { pidAlive } from '../../src/common/pid-file.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';

const run = promisify(execFile);
const SCRIPT = join(resolve(fileURLToPath(import.meta.url), '../../..'), 'scripts/control-plane.sh');

/** What a cluster fault does to the control plane (the seam a fake stands in for in unit tests). */
export interface ClusterControl {
  kubectl(...args: string[]): Promise<string>;
  /** `kubectl apply -f -` of a document (e.g. a v1 List). */
  apply(doc: object): Promise<void>;
  /** Kills kube-apiserver (SIGKILL) and starts it again with the same flags; resolves when it is ready. */
  restartApiserver(): Promise<void>;
  /** Compacts etcd up to its current revision; resolves that revision. */
  compactEtcd(): Promise<number>;
  /** A node kubeconfig (O=system:nodes, CN=system:node:NODE) whose server is `server` (host:port). */
  nodeKubeconfig(node: string, file: string, server: string): Promise<void>;
  /** host:port of the apiserver. */
  readonly apiserver: { host: string; port: number };
}

export class PrivateControlPlane implements ClusterControl {
  readonly dir: string;
  private env: Record<string, string> = {};
  apiserver = { host: '127.0.0.1', port: 0 };
  private etcdPort = 0;

  constructor(tag = randomUUID().slice(0, 6)) {
    // Not under the shared one's dir name: its process check greps command lines for that string.
    this.dir = `/var/lib/kts-faults-cp-${tag}`;
  }

  get kubeconfig(): string {
    return join(this.dir, 'admin.kubeconfig');
  }

  private script(...args: string[]): Promise<{ stdout: string }> {
    return run('bash', [SCRIPT, ...args], { env: { ...process.env, ...this.env }, maxBuffer: 16 * 1024 * 1024 });
  }

  async up(): Promise<void> {
    this.etcdPort = await freePort();
    const peer = await freePort();
    this.apiserver.port = await freePort();
    this.env = {
      KTS_CP_DIR: this.dir,
      KTS_ETCD_PORT: String(this.etcdPort),
      KTS_ETCD_PEER_PORT: String(peer),
      KTS_APISERVER_PORT: String(this.apiserver.port),
    };
    await this.script('up');
  }

  async down(): Promise<void> {
    if (this.apiserver.port === 0) return;
    await this.script('down');
    rmSync(this.dir, { recursive: true, force: true });
  }

  async kubectl(...args: string[]): Promise<string> {
    try {
      const { stdout } = await run('kubectl', ['--kubeconfig', this.kubeconfig, ...args], { maxBuffer: 64 * 1024 * 1024 });
      return stdout;
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`kubectl ${args.slice(0, 6).join(' ')}: ${e.stderr?.trim() || e.message}`, { cause: err });
    }
  }

  async apply(doc: object): Promise<void> {
    const child = spawn('kubectl', ['--kubeconfig', this.kubeconfig, 'apply', '-f', '-'], { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const done = new Promise<void>((res, rej) =>
      child.on('exit', (code) => (code === 0 ? res() : rej(new Error(`kubectl apply: ${stderr.trim()}`)))),
    );
    child.stdin.end(JSON.stringify(doc));
    await done;
  }

  private pid(component: string): number {
    return Number(readFileSync(join(this.dir, 'pids', `${component}.pid`), 'utf8').trim());
  }

  async restartApiserver(): Promise<void> {
    const pid = this.pid('kube-apiserver');
    process.kill(pid, 'SIGKILL');
    await pollUntil(`kube-apiserver (pid ${pid}) to be gone`, () => !pidAlive(pid), { timeoutMs: 30_000 });
    // `up` starts only what is not running, and waits for /readyz.
    await this.script('up');
  }

  async compactEtcd(): Promise<number> {
    const etcdctl = (...args: string[]) =>
      run('etcdctl', ['--endpoints', `http://127.0.0.1:${this.etcdPort}`, ...args], { env: { ...process.env, ETCDCTL_API: '3' } });
    const status = JSON.parse((await etcdctl('endpoint', 'status', '-w', 'json')).stdout) as { Status: { header: { revision: number } } }[];
    const revision = status[0].Status.header.revision;
    await etcdctl('compact', String(revision), '--physical');
    return revision;
  }

  async nodeKubeconfig(node: string, file: string, server: string): Promise<void> {
    await this.script('kubeconfig', node, file);
    const text = readFileSync(file, 'utf8').replace(`https://127.0.0.1:${this.apiserver.port}`, `https://${server}`);
    writeFileSync(file, text, { mode: 0o600 });
  }
}
