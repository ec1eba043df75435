/**
 * Plain-data types of the prober, shared by the prober host (worker thread or
 * inline) and the main thread. Names follow upstream: probe types print as
 * "Liveness" / "Readiness" / "Startup" (probeType.String()); a probe run ends
 * in a pkg/probe Result (success, warning, failure, unknown); what a worker
 * records is a results.Result (Success, Failure, Unknown).
 */
import type { Container, EnvVar, Probe } from '../api/pod.js';

export type ProbeType = 'Liveness' | 'Readiness' | 'Startup';

/** upstream pkg/probe Result */
export type ProbeOutcome = 'success' | 'warning' | 'failure' | 'unknown';

/** upstream prober/results Result */
export type ResultValue = 'Success' | 'Failure' | 'Unknown';

/** The probe spec of a container by type. */
export function probeSpecOf(c: Pick<Container, 'livenessProbe' | 'readinessProbe' | 'startupProbe'>, t: ProbeType): Probe | undefined {
  return t === 'Liveness' ? c.livenessProbe : t === 'Readiness' ? c.readinessProbe : c.startupProbe;
}

/** What a probe worker needs of one container (structured-clone safe). */
export interface ProbeContainer {
  name: string;
  /** A restartable init container (sidecar); probed like a regular container. */
  sidecar: boolean;
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  ports?: Container['ports'];
  /** For $(VAR) expansion in exec probe commands (static values only, as upstream). */
  env?: EnvVar[];
}

/** What the prober needs of a pod (upstream keeps the *v1.Pod given to AddPod). */
export interface ProbePod {
  uid: string;
  name: string;
  namespace: string;
  restartPolicy: string;
  /** Host-network pods are probed at the node's IP. */
  hostNetwork?: boolean;
  /** Set when the pod was being deleted at AddPod time (liveness/startup then report Success and stop). */
  deletionTimestamp?: string;
  containers: ProbeContainer[];
}

/** A result the prober recorded for a container instance (upstream results.Update, plus removals). */
export interface ProbeResultChange {
  podUid: string;
  container: string;
  /** Runtime container id (without the runtime:// prefix). */
  containerId: string;
  probeType: ProbeType;
  /** undefined: the result was removed (the container instance is gone or its worker stopped). */
  result?: ResultValue;
}

/** An event the prober wants recorded against a container (Unhealthy, ProbeWarning). */
export interface ProbeEvent {
  podUid: string;
  podName: string;
  namespace: string;
  container: string;
  /** The container is an init container (its fieldPath is spec.initContainers{name}). */
  init: boolean;
  type: 'Warning' | 'Normal';
  reason: string;
  message: string;
}
