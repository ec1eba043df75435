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
}

export interface RuntimeView {
  sandboxes: SandboxRecord[];
  containers: ContainerRecord[];
}

/** Reads a RuntimeView (the seam the invariant checker is tested through: a fake returns fixed views). */
export interface RuntimeViewSource {
  read(): Promise<RuntimeView>;
  close(): void;
}

const STATE: Record<number, ContainerRecord['state']> = {
  [ContainerState.CONTAINER_CREATED]: 'created',
  [ContainerState.CONTAINER_RUNNING]: 'running',
  [ContainerState.CONTAINER_EXITED]: 'exited',
};

export class CriRuntimeView implements RuntimeViewSource {
  private readonly cri: CriClient;

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
      containers: list.containers.map((c) => ({
        id: c.id,
        sandboxId: c.podSandboxId,
        pod: c.labels[LABEL_POD_NAME] ?? '',
        name: c.labels[LABEL_CONTAINER_NAME] ?? c.metadata?.name ?? '',
        running: c.state === ContainerState.CONTAINER_RUNNING,
        state: STATE[c.state] ?? 'unknown',
      })),
    };
  }

  close(): void {
    this.cri.close();
  }
}
