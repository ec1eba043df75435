/**
 * The evented PLEG's reading of one CRI ContainerEventResponse (upstream
 * kubeGenericRuntimeManager.GeneratePodStatus and EventedPLEG.processCRIEvent,
 * v1.26 and later; v1.20 has no CRI event stream):
 * the pod status the event carries and the lifecycle events it means.
 */
import { ContainerEventType, type ContainerEventResponse } from '../gen/runtime/v1/api.js';
import { newestFirst, toContainerStatus, toSandboxStatus } from './convert.js';
import type { PlegEvent } from './pleg-event.js';
import { capMessages, terminationMessage } from './termination-message.js';
import type { PodStatus } from './types.js';

/**
 * The pod status an event carries: its sandbox's status and the statuses of
 * that sandbox's containers, observed at the event's creation time (ms).
 * undefined when the event has no sandbox status or no sandbox metadata
 * (upstream logs and ignores such an event: the sandbox is already gone, and
 * its deletion event or the next relist brings the pod up to date).
 */
export async function podStatusFromEvent(event: ContainerEventResponse): Promise<PodStatus | undefined> {
  const sb = event.podSandboxStatus;
  if (!sb?.metadata) return undefined;
  const sandbox = toSandboxStatus(sb);
  const containerStatuses = await Promise.all(
    event.containersStatuses.map(async (c) => {
      const s = toContainerStatus(c, sb.id);
      const tMessage = await terminationMessage(c);
      if (tMessage) s.message = s.message ? `${s.message}: ${tMessage}` : tMessage;
      return s;
    }),
  );
  containerStatuses.sort(newestFirst);
  const capped = capMessages(containerStatuses.map((s) => s.message));
  containerStatuses.forEach((s, i) => (s.message = capped[i]!));
  return {
    uid: sb.metadata.uid,
    name: sb.metadata.name,
    namespace: sb.metadata.namespace,
    ips: sandbox.state === 'ready' ? sandbox.ips : [],
    sandboxStatuses: [sandbox],
    containerStatuses,
    timestamp: Number(event.createdAt) / 1e6,
  };
}

/** True when the event reports the removal of the pod's sandbox (upstream then drops the pod's cache entry). */
export function isSandboxDeleted(event: ContainerEventResponse): boolean {
  return event.containerEventType === ContainerEventType.CONTAINER_DELETED_EVENT && event.podSandboxStatus?.id === event.containerId;
}

/**
 * upstream processCRIEvent: STARTED → ContainerStarted, STOPPED →
 * ContainerDied, DELETED → ContainerDied then ContainerRemoved, CREATED →
 * none (the generic PLEG does not deliver creations either).
 */
export function plegEventsOf(uid: string, event: ContainerEventResponse): PlegEvent[] {
  const data = event.containerId;
  switch (event.containerEventType) {
    case ContainerEventType.CONTAINER_STARTED_EVENT:
      return [{ id: uid, type: 'ContainerStarted', data }];
    case ContainerEventType.CONTAINER_STOPPED_EVENT:
      return [{ id: uid, type: 'ContainerDied', data }];
    case ContainerEventType.CONTAINER_DELETED_EVENT:
      return [
        { id: uid, type: 'ContainerDied', data },
        { id: uid, type: 'ContainerRemoved', data },
      ];
    default:
      return [];
  }
}
