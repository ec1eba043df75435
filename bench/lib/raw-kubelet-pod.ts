/**
 * A raw CRI pod made with the kubelet's own requests: the static pod decoded
 * and defaulted as the file source does, the sandbox config of
 * generatePodSandboxConfig (seccomp RuntimeDefault for the pause container
 * as upstream, the DNS config from the node's resolv.conf, port mappings,
 * labels) and the container config of generateContainerConfig (labels,
 * annotations, env, linux resources, masked paths). Three calls as
 * runRawPod: RunPodSandbox + CreateContainer + StartContainer. Not made: the
 * files the kubelet writes and mounts (/etc/hosts, termination log), its
 * status reads and lists. So "agent / this" is the agent's overhead for the
 * same pods, and "this / runRawPod" what the kubelet's requests cost the
 * runtime over minimal ones.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { totalmem } from 'node:os';
import { realClock } from '../../src/common/clock.js';
import type { CriClient } from '../../src/cri/client.js';
import { decodePodManifest } from '../../src/main/podconfig/manifest.js';
import { FILE_SOURCE } from '../../src/main/podconfig/types.js';
import { generateContainerConfig } from '../../src/workers/sync/container-config.js';
import { buildPodLogsDirectory, generatePodSandboxConfig } from '../../src/workers/sync/sandbox-config.js';

export interface KubeletPodOptions {
  /** The static pod manifest (as the agent reads it). */
  manifest: Record<string, unknown>;
  nodeName: string;
  podLogsDir: string;
  /** Resolved image reference for the container configs (the agent's ImageStatus answer). */
  imageRef: string;
}

let resolvConf: string | undefined;

export async function runKubeletConfigPod(cri: CriClient, o: KubeletPodOptions): Promise<void> {
  const pod = decodePodManifest(JSON.stringify(o.manifest), {
    manifestSource: 'bench',
    isFile: true,
    sourceName: FILE_SOURCE,
    nodeName: o.nodeName,
    clock: realClock,
  });
  resolvConf ??= readFileSync('/etc/resolv.conf', 'utf8');
  const sandboxConfig = generatePodSandboxConfig(pod, 0, { podLogsDir: o.podLogsDir, clusterDNS: [], clusterDomain: '', resolvConf });
  mkdirSync(buildPodLogsDirectory(o.podLogsDir, pod), { recursive: true, mode: 0o755 });
  const { podSandboxId } = await cri.runPodSandbox({ config: sandboxConfig });
  for (let i = 0; i < (pod.spec.containers ?? []).length; i++) {
    const config = generateContainerConfig(pod, i, {
      kind: 'regular',
      restartCount: 0,
      podIP: '',
      podIPs: [],
      nodeName: o.nodeName,
      imageRef: o.imageRef,
      memoryCapacityBytes: totalmem(),
    });
    const { containerId } = await cri.createContainer({ podSandboxId, config, sandboxConfig });
    await cri.startContainer({ containerId });
  }
}
