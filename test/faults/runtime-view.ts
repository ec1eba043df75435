/**
 * What the container runtime holds for one test namespace, read with CRI List
 * calls (ListPodSandbox, ListContainers filtered by the pod namespace label):
 * the ground truth the fault suite's invariants are checked against.
 */
import { CriClient } from '../../src/cri/client.js';
import { ContainerState, PodSandboxState } from '../../src/gen/runtime/v1/api.js';
import { LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';

export interface SandboxRecord {
  id: string;
  /** The pod's name as the kubelet labels it (the manifest's name plus `-<node>` for a static pod). */
  pod: string;
  ready: boolean;
}

export interface ContainerRecord {
  id: string;
  sandboxId: string;
  pod: string;
  name: string;
  running: boolean;
  state: 'created' | 'running' | 'exited' | 'unknown';
  /** Created and never started, or exited without having started (containerd's StartError after a cancelled StartContainer). */
  neverStarted: boolean;
}

export interface RuntimeView {
  sandboxes: SandboxRecord[];
  containers: ContainerRecord[];
}

/** Reads a RuntimeView (the seam the invariant checker is tested through: a fake returns fixed views). */
export interface RuntimeViewSource {
  read(): Promise<RuntimeView>;
  /** One line on a container's end (exit code, reason, times), for the report of a violation. */
  describe(id: string): Promise<string>;
  close(): void;
}

const STATE: Record<number, ContainerRecord['state']> = {
  [ContainerState.CONTAINER_CREATED]: 'created',
  [ContainerState.CONTAINER_RUNNING]: 'running',
  [ContainerState.CONTAINER_EXITED]: 'exited',
};

export class CriRuntimeView implements RuntimeViewSource {
  private readonly cri: CriClient;
  /** Whether an exited container ever started (ContainerStatus's started_at; it cannot change once exited). */
  private readonly exitedStarted = new Map<string, boolean>();

  constructor(
    endpoint: string,
    private readonly namespace: string,
  ) {
    this.cri = new CriClient({ runtimeEndpoint: endpoint, timeoutMs: 30_000 });
  }

  async read(): Promise<RuntimeView> {
    const filter = { labelSelector: { [LABEL_POD_NAMESPACE]: this.namespace } };
    const [boxes, list] = await Promise.all([this.cri.listPodSandbox({ filter }), this.cri.listContainers({ filter })]);
    return {
      sandboxes: boxes.items.map((b) => ({
        id: b.id,
        pod: b.labels[LABEL_POD_NAME] ?? b.metadata?.name ?? '',
        ready: b.state === PodSandboxState.SANDBOX_READY,
      })),
      containers: await Promise.all(
        list.containers.map(async (c) => {
          const state = STATE[c.state] ?? 'unknown';
          return {
            id: c.id,
            sandboxId: c.podSandboxId,
            pod: c.labels[LABEL_POD_NAME] ?? '',
            name: c.labels[LABEL_CONTAINER_NAME] ?? c.metadata?.name ?? '',
            running: c.state === ContainerState.CONTAINER_RUNNING,
            state,
            neverStarted: state === 'created' || (state === 'exited' && !(await this.started(c.id))),
          };
        }),
      ),
    };
  }

  private async started(id: string): Promise<boolean> {
    let started = this.exitedStarted.get(id);
    if (started === undefined) {
      started = ((await this.cri.containerStatus({ containerId: id })).status?.startedAt ?? 0n) > 0n;
      this.exitedStarted.set(id, started);
    }
    return started;
  }

  async describe(id: string): Promise<string> {
    const s = (await this.cri.containerStatus({ containerId: id })).status;
    if (!s) return `${id.slice(0, 12)}: no status`;
    const t = (ns: bigint) => (ns > 0n ? new Date(Number(ns / 1_000_000n)).toISOString().slice(11, 23) : '-');
    return `${id.slice(0, 12)}: exit ${s.exitCode} reason ${JSON.stringify(s.reason)} message ${JSON.stringify(s.message.slice(0, 120))} created ${t(s.createdAt)} started ${t(s.startedAt)} finished ${t(s.finishedAt)}`;
  }

  close(): void {
    this.cri.close();
  }
}
