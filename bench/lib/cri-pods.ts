/** CRI helpers the startup and peer benchmarks share: pods of a namespace, their CRI times, their removal. */
import type { CriClient } from '../../src/cri/client.js';
import { LABEL_POD_NAME, LABEL_POD_NAMESPACE } from '../../src/runtime/types.js';
import { mapLimit } from './raw-peer.js';

export interface CriPodTimes {
  /** pod name (CRI label io.kubernetes.pod.name) → times in ms since the epoch */
  [pod: string]: { sandboxCreated: number; containerCreated: number; containerStarted: number };
}

const nsToMs = (ns: bigint) => Number(ns / 1000n) / 1000;

/** Sandbox created_at, container created_at/started_at (ContainerStatus) of every pod of a namespace. */
export async function criTimes(cri: CriClient, namespace: string): Promise<CriPodTimes> {
  const sel = { labelSelector: { [LABEL_POD_NAMESPACE]: namespace } };
  const [boxes, ctrs] = await Promise.all([cri.listPodSandbox({ filter: sel }), cri.listContainers({ filter: sel })]);
  const boxCreated = new Map(boxes.items.map((b) => [b.id, nsToMs(b.createdAt)]));
  const out: CriPodTimes = {};
  await mapLimit(ctrs.containers, 16, async (c) => {
    const st = (await cri.containerStatus({ containerId: c.id })).status;
    const pod = c.labels[LABEL_POD_NAME];
    if (!st || !pod) return;
    out[pod] = {
      sandboxCreated: boxCreated.get(c.podSandboxId) ?? Number.NaN,
      containerCreated: nsToMs(st.createdAt),
      containerStarted: nsToMs(st.startedAt),
    };
  });
  return out;
}

/** Stops and removes every sandbox of a namespace (not timed); the number removed. */
export async function removeNamespace(cri: CriClient, namespace: string, concurrency = 8): Promise<number> {
  const boxes = await cri.listPodSandbox({ filter: { labelSelector: { [LABEL_POD_NAMESPACE]: namespace } } });
  await mapLimit(boxes.items, concurrency, async (s) => {
    await cri.stopPodSandbox({ podSandboxId: s.id }).catch(() => undefined);
    await cri.removePodSandbox({ podSandboxId: s.id }).catch(() => undefined);
  });
  return boxes.items.length;
}
