/**
 * One node for a fault run: a kubelet-ts agent process (the e2e harness's
 * AgentProcess) on the simulated runtime (embedded, `--container-runtime-endpoint=sim`)
 * or on a containerd, with a workload written as static-pod manifests, the
 * runtime's view for the invariants, and removal of everything it started.
 */
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Pod } from '../../src/api/pod.js';
import { pidAlive, readPidFile } from '../../src/common/pid-file.js';
import { pollUntil } from '../helpers/poll.js';
import { AgentProcess } from '../e2e/agent-harness.js';
import { mountTmpfs, unmountAll } from './disk-fill.js';
import { CriRuntimeView, type RuntimeView } from './runtime-view.js';
import { manifestOf, type Workload } from './workload.js';

export interface NodeOptions {
  /** 'sim', or a containerd endpoint (unix://…). */
  endpoint: string;
  nodeName: string;
  workload: Workload;
  /** Environment of the agent process (e.g. KTS_TEST_FAULT_HOOKS=1). */
  agentEnv?: Record<string, string>;
  /** Root, pod-log and container-log directories each on a tmpfs of this size (disk faults). */
  dirsOnTmpfs?: { bytes: number; inodes: number };
}

export class NodeUnderTest {
  readonly agent: AgentProcess;
  private view: CriRuntimeView | undefined;

  constructor(readonly options: NodeOptions) {
    const { endpoint, nodeName, workload } = options;
    this.agent = new AgentProcess(endpoint, nodeName, workload.namespace, [
      `--max-pods=${workload.pods.length + 50}`,
      '--file-check-frequency=1s',
    ]);
    Object.assign(this.agent.env, options.agentEnv ?? {});
    for (const pod of workload.pods) this.agent.writeManifest(pod.name, manifestOf(pod, workload.namespace));
    if (options.dirsOnTmpfs) for (const d of this.stateDirs) mountTmpfs(d, options.dirsOnTmpfs.bytes, options.dirsOnTmpfs.inodes);
  }

  /** The agent's root, pod-log and container-log directories (the harness's layout). */
  get stateDirs(): string[] {
    return ['root', 'pod-logs', 'containers'].map((d) => join(this.agent.dir, d));
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

  pods(): Promise<Pod[]> {
    return this.agent.pods();
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
