/**
 * Pod lifecycle events (upstream pkg/kubelet/pleg PodLifeCycleEventType).
 * `data` is the container (or sandbox) id the event is about.
 */
export type PlegEventType = 'ContainerStarted' | 'ContainerDied' | 'ContainerRemoved' | 'ContainerChanged' | 'PodSync';

export interface PlegEvent {
  /** Pod UID. */
  id: string;
  type: PlegEventType;
  data: string;
}
