/**
 * One node for a fault run: a kubelet-ts agent process (the e2e harness's
 * AgentProcess) on the simulated runtime (embedded, `--container-runtime-endpoint=sim`)
 * or on a containerd, with a workload written as static-pod manifests or, with
 * a cluster, created in the apiserver bound to the node (the agent registers
 * and reaches the apiserver through a CuttableProxy of its own), the runtime's
 * view for the invariants, and removal of everything it started.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/pod.js';
import { pidAlive, readPidFile } from '../../src/common/pid-file.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from '../e2e/agent-harness.js';
import { mountTmpfs, unmountAll } from './disk-fill.js';
import type { ClusterControl } from './private-control-plane.js';
import { CriRuntimeView, type RuntimeView } from './runtime-view.js';
import { CuttableProxy } from './tcp-proxy.js';
import { apiPodList, manifestOf, type Workload } from './workload.js';

export interface NodeOptions {
  /** 'sim', or a containerd endpoint (unix://…). */
  endpoint: string;
  nodeName: string;
  workload: Workload;
  /** Environment of the agent process (e.g. KTS_TEST_FAULT_HOOKS=1). */
  agentEnv?: Record<string, string>;
  /** Root, pod-log and container-log directories each on a tmpfs of this size (disk faults). */
  dirsOnTmpfs?: { bytes: number; inodes: number };
  /** Pods from this control plane (workload.source 'api') instead of static manifests. */
  cluster?: ClusterControl;
}

export class NodeUnderTest {
  readonly agent: AgentProcess;
  private view: CriRuntimeView | undefined;
  /** Between the agent and the apiserver, for a node with a cluster. */
  readonly proxy: CuttableProxy | undefined;
  private prepared = false;

  constructor(readonly options: NodeOptions) {
    const { endpoint, nodeName, workload, cluster } = options;
    this.agent = new AgentProcess(endpoint, nodeName, workload.namespace, [
      `--max-pods=${workload.pods.length + 50}`,
      '--file-check-frequency=1s',
    ]);
    Object.assign(this.agent.env, options.agentEnv ?? {});
    if (cluster) {
      if (workload.source !== 'api') throw new Error('a node with a cluster takes its pods from the apiserver');
      this.proxy = new CuttableProxy(cluster.apiserver.host, cluster.apiserver.port);
    } else {
      for (const pod of workload.pods) this.agent.writeManifest(pod.name, manifestOf(pod, workload.namespace));
    }
    if (options.dirsOnTmpfs) for (const d of this.stateDirs) mountTmpfs(d, options.dirsOnTmpfs.bytes, options.dirsOnTmpfs.inodes);
  }

  /** The agent's root, pod-log and container-log directories (the harness's layout). */
  get stateDirs(): string[] {
    return ['root', 'pod-logs', 'containers'].map((d) => join(this.agent.dir, d));
  }

  get cluster(): ClusterControl | undefined {
    return this.options.cluster;
  }

  /**
   * Starts the agent; the first time with a cluster, makes its namespace (waiting for its default service
   * account), its proxy and kubeconfig, and creates the workload's pods bound to the node.
   */
  async start(): Promise<void> {
    const cluster = this.options.cluster;
    if (cluster && !this.prepared) {
      const ns = this.workload.namespace;
      await cluster.kubectl('create', 'namespace', ns);
      await pollUntil(
        `the default service account of ${ns}`,
        () => cluster.kubectl('-n', ns, 'get', 'serviceaccount', 'default').then(() => true),
        {
          timeoutMs: 60_000,
          intervalMs: 250,
        },
      );
      await this.proxy!.listen();
      const kubeconfig = join(this.agent.dir, 'kubeconfig');
      await cluster.nodeKubeconfig(this.nodeName, kubeconfig, this.proxy!.address);
      this.agent.extraArgs.push(`--kubeconfig=${kubeconfig}`);
      await cluster.apply(apiPodList(this.workload, this.nodeName));
      this.prepared = true;
    }
    await this.agent.start();
  }

  get nodeName(): string {
    return this.options.nodeName;
  }

  get workload(): Workload {
    return this.options.workload;
  }

  get simulated(): boolean {
    return this.options.endpoint === 'sim';
  }

  /** The CRI endpoint the agent uses (for the embedded sim, its socket under the root dir). */
  get criEndpoint(): string {
    return this.simulated ? `unix://${join(this.agent.dir, 'root/sim/cri.sock')}` : this.options.endpoint;
  }

  async runtimeView(): Promise<RuntimeView> {
    this.view ??= new CriRuntimeView(this.criEndpoint, this.workload.namespace);
    return this.view.read();
  }

  /** The end of an exited container, in one line. */
  async describeContainer(id: string): Promise<string> {
    this.view ??= new CriRuntimeView(this.criEndpoint, this.workload.namespace);
    return this.view.describe(id).catch((err: Error) => `${id.slice(0, 12)}: ${err.message}`);
  }

  /** The pods whose statuses are checked: the apiserver's for a node with a cluster, else the agent's /pods. */
  async pods(): Promise<Pod[]> {
    const cluster = this.options.cluster;
    if (!cluster) return this.agent.pods();
    return (JSON.parse(await cluster.kubectl('-n', this.workload.namespace, 'get', 'pods', '-o', 'json')) as { items: Pod[] }).items;
  }

  /** PLEG relists so far (kubelet_pleg_relist_duration_seconds_count of /metrics). */
  async relists(): Promise<number> {
    const text = await (await fetch(this.agent.metricsUrl)).text();
    return Number(/^kubelet_pleg_relist_duration_seconds_count (\d+)/m.exec(text)?.[1] ?? 0);
  }

  /** Waits for `n` more relists: the agent has looked at the runtime again after whatever happened. */
  async settle(n = 5): Promise<void> {
    const from = await this.agent.until('the relist count', () => this.relists().catch(() => undefined));
    await this.agent.until(`${n} more relists`, async () => (await this.relists().catch(() => 0)) >= from + n, 120_000);
  }

  /** Stops the agent and its runtime's pods (a containerd's by namespace; the embedded sim with its agent) and removes the directory. */
  async close(): Promise<void> {
    this.view?.close();
    await this.proxy?.close();
    const cluster = this.options.cluster;
    if (cluster && this.prepared) {
      const ns = this.workload.namespace;
      await cluster.kubectl('-n', ns, 'delete', 'pods', '--all', '--grace-period=0', '--force', '--wait=false').catch(() => undefined);
      await cluster.kubectl('delete', 'namespace', this.workload.namespace, '--wait=false').catch(() => undefined);
      await cluster.kubectl('delete', 'node', this.nodeName, '--ignore-not-found', '--wait=false').catch(() => undefined);
    }
    if (!this.simulated) {
      await this.agent.cleanup();
      return;
    }
    await this.agent.stop();
    // An agent killed last leaves its sim running until the orphan grace ends: stop it now.
    const sim = readPidFile(join(this.agent.dir, 'root/sim/sim.pid'));
    if (sim !== undefined && pidAlive(sim)) {
      process.kill(sim, 'SIGTERM');
      await pollUntil('the embedded sim to exit', () => !pidAlive(sim), { timeoutMs: 30_000 }).catch(() => process.kill(sim, 'SIGKILL'));
    }
    unmountAll(this.stateDirs);
    rmSync(this.agent.dir, { recursive: true, force: true });
  }
}
