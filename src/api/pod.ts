/**
 * The v1 Pod API shapes the kubelet uses (k8s.io/api/core/v1), as zod schemas
 * with inferred types. Contracts:
 *  - Every object schema is loose (z.looseObject): unknown fields are kept,
 *    so nothing the kubelet does not model is lost on a round trip.
 *  - Only field *types* are checked here (a decode error upstream). Semantic
 *    rules (names, ranges, required values) live in
 *    src/main/podconfig/validation.ts, defaults in defaults.ts.
 *  - Timestamps are RFC3339 strings; quantities are strings (see quantity.ts).
 */
import { z } from 'zod';
import { PodStatusSchema } from './pod-status.js';

export * from './pod-status.js';

const str = z.string();
const int = z.number().int();
const strMap = z.record(z.string(), z.string());
/** intstr.IntOrString. */
export const IntOrStringSchema = z.union([int, str]);
export type IntOrString = z.infer<typeof IntOrStringSchema>;

export const ObjectMetaSchema = z.looseObject({
  name: str.optional(),
  generateName: str.optional(),
  namespace: str.optional(),
  uid: str.optional(),
  resourceVersion: str.optional(),
  generation: int.optional(),
  creationTimestamp: str.nullish(),
  deletionTimestamp: str.nullish(),
  deletionGracePeriodSeconds: int.nullish(),
  labels: strMap.optional(),
  annotations: strMap.optional(),
  ownerReferences: z.array(z.looseObject({})).optional(),
  finalizers: z.array(str).optional(),
});
export type ObjectMeta = z.infer<typeof ObjectMetaSchema>;

// --- probes and handlers -------------------------------------------------

export const ExecActionSchema = z.looseObject({ command: z.array(str).optional() });
export const HTTPHeaderSchema = z.looseObject({ name: str, value: str });
export const HTTPGetActionSchema = z.looseObject({
  path: str.optional(),
  port: IntOrStringSchema,
  host: str.optional(),
  scheme: z.enum(['HTTP', 'HTTPS']).optional(),
  httpHeaders: z.array(HTTPHeaderSchema).optional(),
});
export type HTTPGetAction = z.infer<typeof HTTPGetActionSchema>;
export const TCPSocketActionSchema = z.looseObject({ port: IntOrStringSchema, host: str.optional() });
export const GRPCActionSchema = z.looseObject({ port: int, service: str.nullish() });

export const ProbeSchema = z.looseObject({
  exec: ExecActionSchema.optional(),
  httpGet: HTTPGetActionSchema.optional(),
  tcpSocket: TCPSocketActionSchema.optional(),
  grpc: GRPCActionSchema.optional(),
  initialDelaySeconds: int.optional(),
  timeoutSeconds: int.optional(),
  periodSeconds: int.optional(),
  successThreshold: int.optional(),
  failureThreshold: int.optional(),
  terminationGracePeriodSeconds: int.nullish(),
});
export type Probe = z.infer<typeof ProbeSchema>;

export const LifecycleHandlerSchema = z.looseObject({
  exec: ExecActionSchema.optional(),
  httpGet: HTTPGetActionSchema.optional(),
  tcpSocket: TCPSocketActionSchema.optional(),
  sleep: z.looseObject({ seconds: int }).optional(),
});
export const LifecycleSchema = z.looseObject({
  postStart: LifecycleHandlerSchema.optional(),
  preStop: LifecycleHandlerSchema.optional(),
});
export type Lifecycle = z.infer<typeof LifecycleSchema>;

// --- containers -----------------------------------------------------------

export const ContainerPortSchema = z.looseObject({
  name: str.optional(),
  hostPort: int.optional(),
  containerPort: int,
  protocol: str.optional(),
  hostIP: str.optional(),
});
export type ContainerPort = z.infer<typeof ContainerPortSchema>;

export const EnvVarSchema = z.looseObject({
  name: str,
  value: str.optional(),
  valueFrom: z
    .looseObject({
      fieldRef: z.looseObject({ apiVersion: str.optional(), fieldPath: str }).optional(),
      resourceFieldRef: z.looseObject({ containerName: str.optional(), resource: str, divisor: str.optional() }).optional(),
      configMapKeyRef: z.looseObject({ name: str.optional(), key: str, optional: z.boolean().optional() }).optional(),
      secretKeyRef: z.looseObject({ name: str.optional(), key: str, optional: z.boolean().optional() }).optional(),
    })
    .optional(),
});
export type EnvVar = z.infer<typeof EnvVarSchema>;

/** Resource name → quantity string (e.g. `cpu: "100m"`). Numbers are accepted as YAML writes them. */
export const ResourceListSchema = z.record(z.string(), z.union([str, z.number()]).transform(String));
export type ResourceList = z.infer<typeof ResourceListSchema>;

export const ResourceRequirementsSchema = z.looseObject({
  requests: ResourceListSchema.optional(),
  limits: ResourceListSchema.optional(),
});
export type ResourceRequirements = z.infer<typeof ResourceRequirementsSchema>;

export const CapabilitiesSchema = z.looseObject({ add: z.array(str).optional(), drop: z.array(str).optional() });

export const SecurityContextSchema = z.looseObject({
  capabilities: CapabilitiesSchema.optional(),
  privileged: z.boolean().optional(),
  runAsUser: int.optional(),
  runAsGroup: int.optional(),
  runAsNonRoot: z.boolean().optional(),
  readOnlyRootFilesystem: z.boolean().optional(),
  allowPrivilegeEscalation: z.boolean().optional(),
  procMount: str.optional(),
  seccompProfile: z.looseObject({ type: str, localhostProfile: str.optional() }).optional(),
});
export type SecurityContext = z.infer<typeof SecurityContextSchema>;

export const VolumeMountSchema = z.looseObject({
  name: str,
  mountPath: str,
  readOnly: z.boolean().optional(),
  subPath: str.optional(),
  mountPropagation: str.optional(),
});

export const ContainerSchema = z.looseObject({
  name: str,
  image: str.optional(),
  command: z.array(str).optional(),
  args: z.array(str).optional(),
  workingDir: str.optional(),
  ports: z.array(ContainerPortSchema).optional(),
  env: z.array(EnvVarSchema).optional(),
  resources: ResourceRequirementsSchema.optional(),
  volumeMounts: z.array(VolumeMountSchema).optional(),
  livenessProbe: ProbeSchema.optional(),
  readinessProbe: ProbeSchema.optional(),
  startupProbe: ProbeSchema.optional(),
  lifecycle: LifecycleSchema.optional(),
  terminationMessagePath: str.optional(),
  terminationMessagePolicy: str.optional(),
  imagePullPolicy: str.optional(),
  securityContext: SecurityContextSchema.optional(),
  restartPolicy: str.optional(),
  stdin: z.boolean().optional(),
  stdinOnce: z.boolean().optional(),
  tty: z.boolean().optional(),
});
export type Container = z.infer<typeof ContainerSchema>;

// --- pod spec ---------------------------------------------------------------

export const TolerationSchema = z.looseObject({
  key: str.optional(),
  operator: str.optional(),
  value: str.optional(),
  effect: str.optional(),
  tolerationSeconds: int.nullish(),
});
export type Toleration = z.infer<typeof TolerationSchema>;

/** Volume: the name is modelled, the source (hostPath, emptyDir, ...) is kept as-is. */
export const VolumeSchema = z.looseObject({
  name: str,
  hostPath: z.looseObject({ path: str, type: str.optional() }).optional(),
  emptyDir: z.looseObject({ medium: str.optional(), sizeLimit: str.optional() }).optional(),
});
export type Volume = z.infer<typeof VolumeSchema>;

export const PodDNSConfigSchema = z.looseObject({
  nameservers: z.array(str).optional(),
  searches: z.array(str).optional(),
  options: z.array(z.looseObject({ name: str.optional(), value: str.optional() })).optional(),
});

export const PodSecurityContextSchema = z.looseObject({
  runAsUser: int.optional(),
  runAsGroup: int.optional(),
  runAsNonRoot: z.boolean().optional(),
  fsGroup: int.optional(),
  supplementalGroups: z.array(int).optional(),
  sysctls: z.array(z.looseObject({ name: str, value: str })).optional(),
  seccompProfile: z.looseObject({ type: str, localhostProfile: str.optional() }).optional(),
});
export type PodSecurityContext = z.infer<typeof PodSecurityContextSchema>;

export const PodSpecSchema = z.looseObject({
  containers: z.array(ContainerSchema).optional(),
  initContainers: z.array(ContainerSchema).optional(),
  restartPolicy: str.optional(),
  terminationGracePeriodSeconds: int.nullish(),
  activeDeadlineSeconds: int.nullish(),
  dnsPolicy: str.optional(),
  dnsConfig: PodDNSConfigSchema.optional(),
  nodeSelector: strMap.optional(),
  serviceAccountName: str.optional(),
  automountServiceAccountToken: z.boolean().optional(),
  nodeName: str.optional(),
  hostNetwork: z.boolean().optional(),
  hostPID: z.boolean().optional(),
  hostIPC: z.boolean().optional(),
  shareProcessNamespace: z.boolean().optional(),
  securityContext: PodSecurityContextSchema.optional(),
  volumes: z.array(VolumeSchema).optional(),
  tolerations: z.array(TolerationSchema).optional(),
  hostname: str.optional(),
  subdomain: str.optional(),
  schedulerName: str.optional(),
  priorityClassName: str.optional(),
  priority: int.nullish(),
  enableServiceLinks: z.boolean().optional(),
  runtimeClassName: str.nullish(),
});
export type PodSpec = z.infer<typeof PodSpecSchema>;

export const PodSchema = z.looseObject({
  apiVersion: str.optional(),
  kind: str.optional(),
  metadata: ObjectMetaSchema.default({}),
  spec: PodSpecSchema.default({}),
  status: PodStatusSchema.optional(),
});
/** A v1 Pod. `metadata` and `spec` are always present after parsing. */
export type Pod = z.infer<typeof PodSchema>;

export const PodListSchema = z.looseObject({
  apiVersion: str.optional(),
  kind: str.optional(),
  metadata: z.looseObject({ resourceVersion: str.optional() }).optional(),
  items: z
    .array(PodSchema)
    .nullish()
    .transform((v) => v ?? []),
});
export type PodList = z.infer<typeof PodListSchema>;

/** Upstream kubecontainer.GetPodFullName: `<name>_<namespace>`. */
export function podFullName(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}`;
}
