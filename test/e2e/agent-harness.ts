/**
 * Runs the kubelet-ts CLI (built dist) as a child process for e2e tests:
 * free ports, a temp root/log/manifest directory, /pods polling, and clean
 * shutdown plus removal of every pod the test created (by namespace).
 *
 * On a real runtime each agent gets a cgroupRoot of its own (cgroup-root.ts),
 * made before its first start and removed with everything below it by
 * cleanup(): cgroupsPerQOS is on by default, and agents sharing one
 * `/kubepods` would remove each other's pod cgroups.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Pod } from '../../src/api/pod.js';
import { mountsUnder, parseMountInfo } from '../../src/common/mounter.js';
import { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { pollUntil } from '../helpers/poll.js';
import { freePort } from '../helpers/ports.js';
import { createCgroupRoot, newCgroupRootName, removeCgroupTree, removeStaleCgroupRoots } from './cgroup-root.js';

const root = resolve(fileURLToPath(import.meta.url), '../../..');

export interface ContainerSpec {
  name: string;
  command: string[];
  image?: string;
  imagePullPolicy?: string;
}

export function podManifest(
  name: string,
  namespace: string,
  containers: ContainerSpec[],
  opts: { restartPolicy?: string; initContainers?: ContainerSpec[]; grace?: number } = {},
): Record<string, unknown> {
  const c = (x: ContainerSpec) => ({
    name: x.name,
    image: x.image ?? 'docker.io/kubelet-ts/busybox:1.0',
    command: x.command,
    ...(x.imagePullPolicy ? { imagePullPolicy: x.imagePullPolicy } : {}),
  });
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace },
    spec: {
      restartPolicy: opts.restartPolicy ?? 'Always',
      terminationGracePeriodSeconds: opts.grace ?? 5,
      ...(opts.initContainers ? { initContainers: opts.initContainers.map(c) } : {}),
      containers: containers.map(c),
    },
  };
}

/**
 * The environment and node flags of bin/kubelet-ts.js's `#!/usr/bin/env -S [NAME=VALUE …] node [--flag …]`
 * line, so the harness runs the agent as the installed command does.
 */
export function binLaunch(bin = join(root, 'bin/kubelet-ts.js')): { env: Record<string, string>; nodeFlags: string[] } {
  const first = readFileSync(bin, 'utf8').split('\n', 1)[0];
  const m = /^#!\/usr\/bin\/env -S (?<env>(\w+=\S+ )*)node(?<flags>( --\S+)*)$/.exec(first);
  if (!m) throw new Error(`bin/kubelet-ts.js: unexpected first line ${JSON.stringify(first)}`);
  const env = Object.fromEntries(
    m
      .groups!.env.split(' ')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  );
  return { env, nodeFlags: m.groups!.flags.split(' ').filter(Boolean) };
}

export class AgentProcess {
  readonly dir: string;
  readonly manifests: string;
  readonly logs: string[] = [];
  /** Each log line with the wall-clock time (ms) it was read, in order. */
  readonly timedLogs: { at: number; line: string }[] = [];
  /** The kubelet server (HTTPS, authenticated). */
  port = 0;
  /** The read-only server (plain HTTP): /pods, /metrics, /healthz, /stats/summary. */
  readOnlyPort = 0;
  healthzPort = 0;
  private child: ChildProcess | undefined;
  /** Extra environment for the agent process (e.g. NODE_OPTIONS), set before start(). */
  env: Record<string, string> = {};
  /** Extra node flags for the agent process (e.g. --cpu-prof, not allowed in NODE_OPTIONS), set before start(). */
  nodeFlags: string[] = [];
  /** Another build's bin/kubelet-ts.js (with its dist next to it), e.g. a benchmark's baseline; set before start(). */
  bin = join(root, 'bin/kubelet-ts.js');

  /**
   * The agent's cgroupRoot when the harness owns it (a real runtime, and extraArgs set neither
   * --cgroup-root nor --cgroups-per-qos=false): `--cgroup-root` is added, and cleanup() removes it.
   */
  readonly ownCgroupRoot: string | undefined;
  private cgroupRootMade = false;

  /**
   * extraArgs are appended to the CLI flags (later flags win), e.g. ['--max-pods=1100']; they may be
   * replaced between stop() and the next start() (a restart with other flags on the same directories).
   */
  constructor(
    readonly endpoint: string,
    readonly nodeName: string,
    readonly namespace: string,
    public extraArgs: string[] = [],
  ) {
    this.dir = mkdtempSync(join(tmpdir(), 'kts-e2e-'));
    this.manifests = join(this.dir, 'manifests');
    mkdirSync(this.manifests);
    const ownsCgroups =
      endpoint !== 'sim' && !extraArgs.some((a) => a.startsWith('--cgroup-root=') || /^--cgroups-per-qos=(false|0)$/.test(a));
    this.ownCgroupRoot = ownsCgroups ? newCgroupRootName() : undefined;
  }

  /** Atomic replace through a dot-file (ignored by the file source), as config managers do. */
  writeManifest(file: string, pod: Record<string, unknown>): void {
    const tmp = join(this.manifests, `.${file}.tmp`);
    writeFileSync(tmp, JSON.stringify(pod));
    renameSync(tmp, join(this.manifests, `${file}.json`));
  }

  deleteManifest(file: string): void {
    rmSync(join(this.manifests, `${file}.json`), { force: true });
  }

  async start(): Promise<void> {
    if (this.ownCgroupRoot !== undefined && !this.cgroupRootMade) {
      removeStaleCgroupRoots();
      createCgroupRoot(this.ownCgroupRoot);
      this.cgroupRootMade = true;
    }
    this.port = await freePort();
    this.readOnlyPort = await freePort();
    this.healthzPort = await freePort();
    const launch = binLaunch(this.bin);
    const child = spawn(
      process.execPath,
      [
        ...launch.nodeFlags,
        ...this.nodeFlags,
        this.bin,
        `--container-runtime-endpoint=${this.endpoint}`,
        `--pod-manifest-path=${this.manifests}`,
        `--root-dir=${join(this.dir, 'root')}`,
        `--pod-logs-dir=${join(this.dir, 'pod-logs')}`,
        `--container-logs-dir=${join(this.dir, 'containers')}`,
        `--hostname-override=${this.nodeName}`,
        `--port=${this.port}`,
        `--healthz-port=${this.healthzPort}`,
        '--address=127.0.0.1',
        `--read-only-port=${this.readOnlyPort}`,
        '--file-check-frequency=2s',
        '--v=2',
        // Many agents share one containerd here: image GC by one would remove images another's next pod
        // needs, if the disk ever crossed the high threshold. Off unless a test turns it on (image-gc.test.ts).
        '--image-gc-high-threshold=100',
        ...(this.ownCgroupRoot !== undefined ? [`--cgroup-root=${this.ownCgroupRoot}`] : []),
        ...this.extraArgs,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...launch.env, ...this.env } },
    );
    this.child = child;
    const collect = (b: Buffer) => {
      const at = Date.now();
      for (const line of b.toString().split('\n').filter(Boolean)) {
        this.logs.push(line);
        this.timedLogs.push({ at, line });
      }
    };
    child.stdout.on('data', collect);
    child.stderr.on('data', collect);
    const serves = (what: string, port: number) =>
      pollUntil(
        `the agent to serve ${what}`,
        async () => {
          if (child.exitCode !== null) throw new Error(`agent exited with ${child.exitCode}:\n${this.tail()}`);
          const r = await fetch(`http://127.0.0.1:${port}/healthz`).catch(() => undefined);
          return r?.ok === true;
        },
        { timeoutMs: 60_000 },
      );
    await serves('/healthz', this.healthzPort);
    // The read-only server starts beside the sync loop (as upstream's), so it may answer after /healthz.
    const readOnly = [...this.extraArgs].reverse().find((a) => a.startsWith('--read-only-port='));
    if (readOnly !== '--read-only-port=0') await serves('its read-only port', this.readOnlyPort);
  }

  /** The agent's process id while it runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** When each log line matching `re` was read (ms), in order. */
  logTimes(re: RegExp): number[] {
    return this.timedLogs.filter((l) => re.test(l.line)).map((l) => l.at);
  }

  tail(n = 60): string {
    return this.logs.slice(-n).join('\n');
  }

  /** /metrics of the read-only server. */
  get metricsUrl(): string {
    return `http://127.0.0.1:${this.readOnlyPort}/metrics`;
  }

  /** The text of /metrics (read-only server); an HTTP error throws. */
  async metrics(): Promise<string> {
    const r = await fetch(this.metricsUrl);
    if (!r.ok) throw new Error(`kubelet-ts /metrics: HTTP ${r.status}`);
    return r.text();
  }

  async pods(): Promise<Pod[]> {
    const r = await fetch(`http://127.0.0.1:${this.readOnlyPort}/pods`);
    return ((await r.json()) as { items: Pod[] }).items;
  }

  async pod(name: string): Promise<Pod | undefined> {
    return (await this.pods()).find((p) => p.metadata.name === `${name}-${this.nodeName}`);
  }

  /** pollUntil, with the agent's log tail in the error when it times out. */
  until<T>(what: string, fn: () => Promise<T | undefined | false> | T | undefined | false, timeoutMs = 90_000): Promise<T> {
    return pollUntil(what, fn, { timeoutMs, intervalMs: 200 }).catch((err: Error) => {
      throw new Error(`${err.message}\n--- agent log tail ---\n${this.tail(80)}`);
    });
  }

  /** Waits until the pod `name` (without the node suffix) is in /pods and `cond` holds for it. */
  waitPod<T>(what: string, name: string, cond: (p: Pod) => T | undefined | false, timeoutMs = 90_000): Promise<T> {
    return this.until(
      `${what} (${name})`,
      async () => {
        const p = await this.pod(name);
        return p ? cond(p) : undefined;
      },
      timeoutMs,
    );
  }

  async stop(signal: NodeJS.Signals = 'SIGTERM'): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill(signal);
    await exited;
  }

  /**
   * Stops the agent, removes every pod of the test namespace from the runtime, deletes the temp dir
   * and the agent's own cgroupRoot (in every hierarchy).
   */
  async cleanup(): Promise<void> {
    await this.stop();
    const cri = new CriClient({ runtimeEndpoint: this.endpoint, timeoutMs: 60_000 });
    try {
      const boxes = await cri.listPodSandbox({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: this.namespace } } });
      for (const s of boxes.items) {
        await cri.stopPodSandbox({ podSandboxId: s.id }).catch(() => undefined);
        await cri.removePodSandbox({ podSandboxId: s.id }).catch(() => undefined);
      }
    } finally {
      cri.close();
      // Volumes the agent left mounted (it does not unmount on stop, as upstream) go before the directory.
      for (const m of this.mounts()) execFileSync('umount', [m]);
      rmSync(this.dir, { recursive: true, force: true });
      this.removeOwnCgroupRoot();
    }
  }

  /** Removes the agent's own cgroupRoot with everything below it (what is left in it is killed); cleanup() calls it. */
  removeOwnCgroupRoot(): void {
    if (this.ownCgroupRoot === undefined || !this.cgroupRootMade) return;
    removeCgroupTree(this.ownCgroupRoot);
    this.cgroupRootMade = false;
  }

  /** Mount points below the test's directory (volumes of its pods), deepest first. */
  mounts(): string[] {
    return mountsUnder(parseMountInfo(readFileSync('/proc/self/mountinfo', 'utf8')), this.dir).map((m) => m.mountPoint);
  }
}
