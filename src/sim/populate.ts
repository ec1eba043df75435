/**
 * Creates pods directly over CRI, labelled as the kubelet labels them, so
 * tests and benchmarks can load a runtime (the simulator or containerd)
 * without going through the agent. Also the "raw CRI" baseline the startup
 * benchmark compares the agent against.
 */
import type { CriClient } from '../cri/client.js';
import { ANNOTATION_RESTART_COUNT, LABEL_CONTAINER_NAME, LABEL_POD_NAME, LABEL_POD_NAMESPACE, LABEL_POD_UID } from '../runtime/types.js';

export const SIM_BUSYBOX_IMAGE = 'docker.io/kubelet-ts/busybox:1.0';

export interface RawPodSpec {
  uid: string;
  name: string;
  namespace?: string;
  logDirectory?: string;
  containers: { name: string; command: string[]; image?: string }[];
}

export interface RawPod {
  sandboxId: string;
  containerIds: string[];
}

/** RunPodSandbox, then CreateContainer + StartContainer for each container, in order. */
export async function runRawPod(cri: CriClient, spec: RawPodSpec): Promise<RawPod> {
  const namespace = spec.namespace ?? 'default';
  const podLabels = { [LABEL_POD_UID]: spec.uid, [LABEL_POD_NAME]: spec.name, [LABEL_POD_NAMESPACE]: namespace };
  const config = {
    metadata: { name: spec.name, namespace, uid: spec.uid, attempt: 0 },
    hostname: spec.name,
    logDirectory: spec.logDirectory ?? '',
    labels: podLabels,
  };
  const { podSandboxId } = await cri.runPodSandbox({ config });
  const containerIds: string[] = [];
  for (const c of spec.containers) {
    const { containerId } = await cri.createContainer({
      podSandboxId,
      config: {
        metadata: { name: c.name, attempt: 0 },
        image: { image: c.image ?? SIM_BUSYBOX_IMAGE },
        command: c.command,
        logPath: spec.logDirectory ? `${c.name}/0.log` : '',
        labels: { ...podLabels, [LABEL_CONTAINER_NAME]: c.name },
        annotations: { [ANNOTATION_RESTART_COUNT]: '0' },
      },
      sandboxConfig: config,
    });
    await cri.startContainer({ containerId });
    containerIds.push(containerId);
  }
  return { sandboxId: podSandboxId, containerIds };
}

/** Runs `count` pods with `containersPerPod` long-running containers, `concurrency` at a time. */
export async function populate(
  cri: CriClient,
  count: number,
  options: { containersPerPod?: number; concurrency?: number; prefix?: string } = {},
): Promise<RawPod[]> {
  const { containersPerPod = 2, concurrency = 32, prefix = 'load' } = options;
  const out = new Array<RawPod>(count);
  let next = 0;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      out[i] = await runRawPod(cri, {
        uid: `${prefix}-uid-${i}`,
        name: `${prefix}-${i}`,
        containers: Array.from({ length: containersPerPod }, (_, k) => ({ name: `c${k}`, command: ['sleep', 'infinity'] })),
      });
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  return out;
}
