/**
 * The event recorder (upstream record.EventRecorder) and the references events
 * point at. Every recorded event is logged at V(3), as upstream's kubelet logs
 * its events, and handed to the sink when there is one (the apiserver sink,
 * event-sink.ts). `record` never blocks and never throws.
 */
import type { Logger } from 'pino';
import type { Event, ObjectReference } from '../../api/cluster.js';
import type { Pod } from '../../api/pod.js';
import { v } from '../../common/logger.js';
import { rfc3339 } from '../../common/time.js';

export type EventType = 'Normal' | 'Warning';

export interface EventRecorder {
  record(ref: ObjectReference, type: EventType, reason: string, message: string): void;
}

/** Where recorded events go besides the log. */
export interface EventSink {
  /** Enqueues; must not block or throw. */
  add(event: Event): void;
}

/** The reference upstream's kubelet uses for its node: kind Node, uid = the node name. */
export function nodeReference(nodeName: string): ObjectReference {
  return { kind: 'Node', name: nodeName, uid: nodeName, namespace: '' };
}

/** A pod, or one of its containers with fieldPath `spec.containers{name}` (upstream GenerateContainerRef). */
export function podReference(pod: Pod, container?: { name: string; init?: boolean }): ObjectReference {
  const ref: ObjectReference = {
    kind: 'Pod',
    apiVersion: 'v1',
    namespace: pod.metadata.namespace,
    name: pod.metadata.name,
    uid: pod.metadata.uid,
  };
  if (pod.metadata.resourceVersion) ref.resourceVersion = pod.metadata.resourceVersion;
  if (container) ref.fieldPath = `spec.${container.init ? 'initContainers' : 'containers'}{${container.name}}`;
  return ref;
}

export interface RecorderOptions {
  /** source.component: "kubelet". */
  component: string;
  host: string;
  logger: Logger;
  now: () => number;
  sink?: EventSink;
}

export class Recorder implements EventRecorder {
  constructor(private readonly options: Readonly<RecorderOptions>) {}

  record(ref: ObjectReference, type: EventType, reason: string, message: string): void {
    const object = ref.namespace ? `${ref.namespace}/${ref.name ?? ''}` : (ref.name ?? '');
    v(this.options.logger, 3).info({ object, kind: ref.kind, fieldPath: ref.fieldPath, type, reason }, message);
    if (!this.options.sink) return;
    const now = rfc3339(this.options.now());
    this.options.sink.add({
      metadata: { namespace: ref.namespace || 'default' },
      involvedObject: ref,
      reason,
      message,
      type,
      source: { component: this.options.component, host: this.options.host },
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
      reportingComponent: this.options.component,
      reportingInstance: this.options.host,
    });
  }
}
