/**
 * A raw CRI pod made with the kubelet's own requests: the static pod decoded
 * and defaulted as the file source does, the sandbox config of
 * generatePodSandboxConfig (seccomp RuntimeDefault for the pause container
 * as upstream, the DNS config from the node's resolv.conf, port mappings,
 * labels) and the container config of generateContainerConfig (labels,
 * annotations, env, linux resources, masked paths).
 *
 * Two levels:
 * - configs: three calls as runRawPod (RunPodSandbox + CreateContainer +
 *   StartContainer), no files, no status reads. "agent / this" is the agent's
 *   overhead for the same pods, "this / runRawPod" what the kubelet's requests
 *   cost the runtime over minimal ones.
 * - work: also the rest of what a kubelet must do to start the pod and learn
 *   that it runs, with the agent's own functions, one pod at a time and no
 *   kubelet around it: the pod's directories (pods/<uid>/volumes, plugins),
 *   PodSandboxStatus after RunPodSandbox (its IPs, as upstream SyncPod),
 *   the image check before CreateContainer (the agent's ensureImage: an
 *   ImageStatus unless the batch's PresentImages found the image present
 *   moments ago, as each agent thread does), the restart count from the log
 *   directory, the hosts file and the termination-message file (makeMounts),
 *   the legacy log link after StartContainer, and one ContainerStatus (the
 *   least a kubelet reads to report the container; upstream's relist
 *   inspection reads more). Five calls per pod, as the agent makes.
 *   "agent / this" is what the agent adds beyond the work itself: process
 *   start, manifests, dispatch, PLEG, status, and its concurrency.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import { realClock } from '../../src/common/clock.js';
import { LinuxMounter } from '../../src/common/mounter.js';
import type { CriClient } from '../../src/cri/client.js';
import { decodePodManifest } from '../../src/main/podconfig/manifest.js';
import { FILE_SOURCE } from '../../src/main/podconfig/types.js';
import { legacyLogLinkPath, linkContainerLog } from '../../src/workers/logs/legacy-log-link.js';
import { generateContainerConfig } from '../../src/workers/sync/container-config.js';
import { ensureImage } from '../../src/workers/sync/image-puller.js';
import type { PresentImages } from '../../src/workers/sync/present-images.js';
import { containerLogsDirectory, restartCountFromLogDir } from '../../src/workers/sync/log-restart-count.js';
import { makeMounts } from '../../src/workers/sync/make-mounts.js';
import { buildPodLogsDirectory } from '../../src/pod/log-paths.js';
import { generatePodSandboxConfig, podHostNameAndDomain } from '../../src/workers/sync/sandbox-config.js';

export interface KubeletPodOptions {
  /** The static pod manifest (as the agent reads it). */
  manifest: Record<string, unknown>;
  nodeName: string;
  podLogsDir: string;
  /** Resolved image reference for the container configs (the agent's ImageStatus answer). */
  imageRef: string;
  /** Also the files and status reads a kubelet makes (the "work" level); absent: configs only. */
  work?: { rootDir: string; containerLogsDir: string; presentImages: PresentImages };
}

let resolvConf: string | undefined;
const mounter = new LinuxMounter();

export async function runKubeletConfigPod(cri: CriClient, o: KubeletPodOptions): Promise<void> {
  const pod = decodePodManifest(JSON.stringify(o.manifest), {
    manifestSource: 'bench',
    isFile: true,
    sourceName: FILE_SOURCE,
    nodeName: o.nodeName,
    clock: realClock,
  });
  resolvConf ??= readFileSync('/etc/resolv.conf', 'utf8');
  const podDir = o.work && join(o.work.rootDir, 'pods', pod.metadata.uid ?? '');
  if (podDir) for (const d of ['volumes', 'plugins']) mkdirSync(join(podDir, d), { recursive: true, mode: 0o750 });
  const sandboxConfig = generatePodSandboxConfig(pod, 0, { podLogsDir: o.podLogsDir, clusterDNS: [], clusterDomain: '', resolvConf });
  const podLogs = buildPodLogsDirectory(o.podLogsDir, pod);
  mkdirSync(podLogs, { recursive: true, mode: 0o755 });
  const { podSandboxId } = await cri.runPodSandbox({ config: sandboxConfig });
  const ips: string[] = [];
  if (o.work) {
    const { status } = await cri.podSandboxStatus({ podSandboxId });
    if (status?.network?.ip) ips.push(status.network.ip);
  }
  const containers = pod.spec.containers ?? [];
  for (let i = 0; i < containers.length; i++) {
    const c = containers[i];
    let imageRef = o.imageRef;
    if (o.work) {
      const image = await ensureImage(cri, pod, c, {}, Date.now(), { presentImages: o.work.presentImages });
      if (!image.ok) throw new Error(`${c.image}: ${image.reason.reason}: ${image.reason.message}`);
      imageRef = image.imageRef;
    }
    const config = generateContainerConfig(pod, i, {
      kind: 'regular',
      restartCount: o.work ? restartCountFromLogDir(containerLogsDirectory(podLogs, c.name)) : 0,
      podIP: ips[0] ?? '',
      podIPs: ips,
      nodeName: o.nodeName,
      imageRef,
      memoryCapacityBytes: totalmem(),
      ...(podDir && {
        mounts: await makeMounts(pod, c, {
          podDir,
          volumes: {},
          podIPs: ips,
          ...podHostNameAndDomain(pod),
          env: [],
          mounter, // used for subPath only; these pods have none
        }),
      }),
    });
    const { containerId } = await cri.createContainer({ podSandboxId, config, sandboxConfig });
    await cri.startContainer({ containerId });
    if (o.work && config.logPath) {
      const link = legacyLogLinkPath(o.work.containerLogsDir, pod.metadata.name ?? '', pod.metadata.namespace ?? '', c.name, containerId);
      linkContainerLog(link, join(podLogs, config.logPath), o.work.containerLogsDir);
      await cri.containerStatus({ containerId });
    }
  }
}
