/**
 * Runs the upstream Go kubelet (v1.20.2, built by `scripts/control-plane.sh
 * build`) standalone against a given CRI endpoint with a static-pod
 * directory, in a temp root dir, for benchmarks and e2e tests that compare it
 * with kubelet-ts.
 *
 * How it runs here (see shared FACTS): a KubeletConfiguration with cgroupfs,
 * cgroupsPerQOS false, no enforced node allocatable and failSwapOn false;
 * `--container-runtime=remote`, the local pause image. Its /metrics is https
 * on `port`: with auth 'anonymous' anyone may read it (anonymous auth +
 * AlwaysAllow); with 'x509' only a client certificate signed by the test CA
 * may (anonymous off, clientCAFile, AlwaysAllow). Its serving certificate is
 * signed by that CA too, so clients verify it with `pki.caCert`.
 *
 * Lifecycle contract: `start()` resolves once /healthz answers "ok" and
 * rejects (after cleaning up) if the process exits or the deadline passes.
 * `cleanup()` is safe on every path, also after a failed start: it stops the
 * process (SIGTERM, then SIGKILL after `stopTimeoutMs`), removes the pods of
 * `namespace` from the runtime (the kubelet leaves them running when it
 * exits), removes their /var/log/pods directories and /var/log/containers
 * links, unmounts everything under
 * the root dir (the kubelet bind-mounts its root dir onto itself) and deletes
 * the temp dir. A process-exit hook kills the child if the caller dies first.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { makePki, type Pki } from '../../test/helpers/pki.js';
import { pollUntil } from '../../test/helpers/poll.js';
import { freePort } from '../../test/helpers/ports.js';

export const GO_KUBELET_BIN = process.env.KTS_GO_KUBELET ?? '/var/cache/kubelet-ts/kubernetes-1.20.2/bin/kubelet';
export const PAUSE_IMAGE = 'docker.io/kubelet-ts/pause:1.0';
const POD_LOG_ROOT = '/var/log/pods'; // fixed in the 1.20 kubelet
const CONTAINER_LOG_LINKS = '/var/log/containers';

export interface GoKubeletOptions {
  /** CRI endpoint, unix:///… */
  endpoint: string;
  nodeName: string;
  /** Namespace of the test's pods: cleanup() removes these from the runtime. */
  namespace: string;
  /** 'anonymous' (default): anyone reads /metrics; 'x509': only the test CA's client certificate. */
  auth?: 'anonymous' | 'x509';
  maxPods?: number;
  /** Serve the read-only port (plain http, no auth) too. */
  readOnlyPort?: boolean;
  /** Static pod directory re-list period (Go duration), default 2s. */
  fileCheckFrequency?: string;
  verbosity?: number;
  extraArgs?: readonly string[];
  /** KubeletConfiguration fields merged over the defaults above. */
  extraConfig?: Record<string, unknown>;
  startTimeoutMs?: number;
  stopTimeoutMs?: number;
  bin?: string;
}

export class GoKubelet {
  readonly dir: string;
  readonly rootDir: string;
  readonly manifests: string;
  readonly pki: Pki;
  port = 0;
  healthzPort = 0;
  readOnlyPort = 0;
  /** The last 2000 log lines. */
  readonly logs: string[] = [];
  private child: ChildProcess | undefined;
  private readonly killOnExit = () => this.child?.kill('SIGKILL');

  constructor(readonly opts: GoKubeletOptions) {
    this.dir = mkdtempSync(join(tmpdir(), 'kts-go-kubelet-'));
    this.rootDir = join(this.dir, 'root');
    this.manifests = join(this.dir, 'manifests');
    mkdirSync(this.rootDir);
    mkdirSync(this.manifests);
    mkdirSync(join(this.dir, 'pki'));
    this.pki = makePki(join(this.dir, 'pki'));
  }

  get metricsUrl(): string {
    return `https://127.0.0.1:${this.port}/metrics`;
  }

  get readOnlyMetricsUrl(): string | undefined {
    return this.readOnlyPort ? `http://127.0.0.1:${this.readOnlyPort}/metrics` : undefined;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  tail(n = 60): string {
    return this.logs.slice(-n).join('\n');
  }

  /** Atomic write through a dot-file, which the file source ignores. */
  writeManifest(file: string, pod: Record<string, unknown>): void {
    const tmp = join(this.manifests, `.${file}.tmp`);
    writeFileSync(tmp, JSON.stringify(pod));
    renameSync(tmp, join(this.manifests, `${file}.json`));
  }

  deleteManifest(file: string): void {
    rmSync(join(this.manifests, `${file}.json`), { force: true });
  }

  private config(): Record<string, unknown> {
    const x509 = this.opts.auth === 'x509';
    return {
      apiVersion: 'kubelet.config.k8s.io/v1beta1',
      kind: 'KubeletConfiguration',
      address: '127.0.0.1',
      port: this.port,
      readOnlyPort: this.readOnlyPort,
      healthzBindAddress: '127.0.0.1',
      healthzPort: this.healthzPort,
      staticPodPath: this.manifests,
      fileCheckFrequency: this.opts.fileCheckFrequency ?? '2s',
      cgroupDriver: 'cgroupfs',
      cgroupsPerQOS: false,
      enforceNodeAllocatable: [],
      failSwapOn: false,
      maxPods: this.opts.maxPods ?? 110,
      tlsCertFile: this.pki.serverCert,
      tlsPrivateKeyFile: this.pki.serverKey,
      authentication: {
        anonymous: { enabled: !x509 },
        webhook: { enabled: false },
        x509: x509 ? { clientCAFile: this.pki.caCert } : {},
      },
      authorization: { mode: 'AlwaysAllow' },
      ...this.opts.extraConfig,
    };
  }

  async start(): Promise<void> {
    const bin = this.opts.bin ?? GO_KUBELET_BIN;
    if (!existsSync(bin)) {
      await this.cleanup();
      throw new Error(
        `the Go kubelet is not at ${bin}: build it with 'sudo bash scripts/control-plane.sh build' (about 7 minutes) or set KTS_GO_KUBELET`,
      );
    }
    this.port = await freePort();
    this.healthzPort = await freePort();
    this.readOnlyPort = this.opts.readOnlyPort ? await freePort() : 0;
    const configFile = join(this.dir, 'kubelet-config.json');
    writeFileSync(configFile, JSON.stringify(this.config(), null, 2));
    const child = spawn(
      bin,
      [
        `--config=${configFile}`,
        `--root-dir=${this.rootDir}`,
        `--cert-dir=${join(this.dir, 'pki')}`,
        '--container-runtime=remote',
        `--container-runtime-endpoint=${this.opts.endpoint}`,
        `--pod-infra-container-image=${PAUSE_IMAGE}`,
        `--hostname-override=${this.opts.nodeName}`,
        `--v=${this.opts.verbosity ?? 1}`,
        ...(this.opts.extraArgs ?? []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    this.child = child;
    let spawnError: Error | undefined;
    child.once('error', (err) => (spawnError = err));
    process.once('exit', this.killOnExit);
    const collect = (b: Buffer) => {
      this.logs.push(...b.toString().split('\n').filter(Boolean));
      if (this.logs.length > 2000) this.logs.splice(0, this.logs.length - 2000);
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    try {
      // The poll ends early with a reason when the process cannot come up (pollUntil retries on throw).
      const fatal = await pollUntil(
        'the Go kubelet to answer /healthz',
        async () => {
          if (spawnError) return `the Go kubelet (${bin}) could not be started: ${spawnError.message}`;
          if (child.exitCode !== null || child.signalCode !== null) {
            return `the Go kubelet exited (${child.exitCode ?? child.signalCode}):\n${this.tail(40)}`;
          }
          const r = await fetch(`http://127.0.0.1:${this.healthzPort}/healthz`).catch(() => undefined);
          return r?.ok === true && (await r.text()).trim() === 'ok' ? '' : undefined;
        },
        { timeoutMs: this.opts.startTimeoutMs ?? 90_000, intervalMs: 200 },
      );
      if (fatal) throw new Error(fatal);
    } catch (err) {
      await this.cleanup().catch(() => undefined);
      throw err;
    }
  }

  /** SIGTERM, then SIGKILL after stopTimeoutMs; resolves when the process is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), this.opts.stopTimeoutMs ?? 20_000);
    await exited;
    clearTimeout(timer);
    process.removeListener('exit', this.killOnExit);
  }

  /** Mount points at or under the root dir, deepest first. */
  private mountsUnderRoot(): string[] {
    const mounts = readFileSync('/proc/self/mountinfo', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[4])
      .filter((m): m is string => !!m)
      .map((m) => m.replace(/\\040/g, ' '));
    return mounts.filter((m) => m === this.rootDir || m.startsWith(`${this.rootDir}/`)).sort((a, b) => b.length - a.length);
  }

  private unmountAll(): void {
    // The root dir may be mounted more than once (bind onto itself, then pod volumes under it).
    for (let round = 0; round < 10; round++) {
      const mounts = this.mountsUnderRoot();
      if (mounts.length === 0) return;
      for (const m of mounts) {
        try {
          execFileSync('umount', [m], { stdio: 'ignore' });
        } catch {
          execFileSync('umount', ['-l', m], { stdio: 'ignore' });
        }
      }
    }
    throw new Error(`mounts under ${this.rootDir} remain after 10 rounds of umount: ${this.mountsUnderRoot().join(', ')}`);
  }

  async cleanup(): Promise<void> {
    await this.stop();
    if (!this.child) {
      // Never spawned: it made no pods and no mounts.
      rmSync(this.dir, { recursive: true, force: true });
      return;
    }
    const cri = new CriClient({ runtimeEndpoint: this.opts.endpoint, timeoutMs: 60_000 });
    try {
      const boxes = await cri.listPodSandbox({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: this.opts.namespace } } });
      for (const s of boxes.items) {
        await cri.stopPodSandbox({ podSandboxId: s.id }).catch(() => undefined);
        await cri.removePodSandbox({ podSandboxId: s.id }).catch(() => undefined);
      }
    } finally {
      cri.close();
      if (existsSync(POD_LOG_ROOT)) {
        for (const d of readdirSync(POD_LOG_ROOT)) {
          if (d.startsWith(`${this.opts.namespace}_`)) rmSync(join(POD_LOG_ROOT, d), { recursive: true, force: true });
        }
      }
      // Its /var/log/containers/<pod>_<namespace>_<container>-<id>.log links.
      if (existsSync(CONTAINER_LOG_LINKS)) {
        for (const f of readdirSync(CONTAINER_LOG_LINKS)) {
          if (f.includes(`_${this.opts.namespace}_`)) rmSync(join(CONTAINER_LOG_LINKS, f), { force: true });
        }
      }
      this.unmountAll();
      rmSync(this.dir, { recursive: true, force: true });
    }
  }
}
