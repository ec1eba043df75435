/**
 * The v1 Pod (k8s.io/api/core/v1): the types are client-node's models in wire
 * form (core-v1.ts, re-exported here so that every module imports the Pod from
 * this one place), and the zod schemas decode a pod from untrusted input (static
 * pod manifests from files or HTTP). Contracts:
 *  - Each schema is checked at compile time (`decodes`) to produce the model
 *    type, so the decoder and the model cannot drift apart.
 *  - Every object schema is loose (z.looseObject): unknown fields are kept,
 *    so nothing the kubelet does not model is lost on a round trip.
 *  - Only field *types* are checked here (a decode error upstream). Semantic
 *    rules (names, ranges, required values) live in
 *    src/main/podconfig/validation.ts, defaults in defaults.ts.
 *  - An explicit null where Go would decode a nil pointer or slice becomes
 *    absent; a timestamp stays an RFC3339 string or null (a zero metav1.Time);
 *    quantities are strings (see quantity.ts).
 */
import { z } from 'zod';
import type {
  Container,
  ContainerPort,
  EnvVar,
  HTTPGetAction,
  Lifecycle,
  ObjectMeta,
  Pod,
  PodSecurityContext,
  PodSpec,
  Probe,
  ResourceList,
  ResourceRequirements,
  SecurityContext,
  Toleration,
  Volume,
} from './core-v1.js';
import { decodes } from './decodes.js';
import { PodStatusSchema } from './pod-status.js';

export type * from './pod-status.js';
export type { Container, ContainerPort, EnvVar, HTTPGetAction, Pod, Probe, ResourceList } from './core-v1.js';

const str = z.string();
const int = z.number().int();
const strMap = z.record(z.string(), z.string());
/** A Go pointer field: absent or null both decode to absent. */
const ptr = <T extends z.ZodType>(s: T) => s.nullish().transform((v) => v ?? undefined);
/** A metav1.Time: an RFC3339 string, or null for the zero time. */
const time = str.nullish();
/** intstr.IntOrString. */
const IntOrStringSchema = z.union([int, str]);

const ObjectMetaSchema = decodes<ObjectMeta>()(
  z.looseObject({
    name: str.optional(),
    generateName: str.optional(),
    namespace: str.optional(),
    uid: str.optional(),
    resourceVersion: str.optional(),
    generation: int.optional(),
    creationTimestamp: time,
    deletionTimestamp: time,
    deletionGracePeriodSeconds: ptr(int),
    labels: strMap.optional(),
    annotations: strMap.optional(),
    ownerReferences: z
      .array(
        z.looseObject({
          apiVersion: str,
          kind: str,
          name: str,
          uid: str,
          controller: z.boolean().optional(),
          blockOwnerDeletion: z.boolean().optional(),
        }),
      )
      .optional(),
    finalizers: z.array(str).optional(),
  }),
);

// --- probes and handlers -------------------------------------------------

const ExecActionSchema = z.looseObject({ command: z.array(str).optional() });
const HTTPHeaderSchema = z.looseObject({ name: str, value: str });
const HTTPGetActionSchema = decodes<HTTPGetAction>()(
  z.looseObject({
    path: str.optional(),
    port: IntOrStringSchema,
    host: str.optional(),
    scheme: z.enum(['HTTP', 'HTTPS']).optional(),
    httpHeaders: z.array(HTTPHeaderSchema).optional(),
  }),
);
const TCPSocketActionSchema = z.looseObject({ port: IntOrStringSchema, host: str.optional() });
const GRPCActionSchema = z.looseObject({ port: int, service: ptr(str) });

const ProbeSchema = decodes<Probe>()(
  z.looseObject({
    exec: ExecActionSchema.optional(),
    httpGet: HTTPGetActionSchema.optional(),
    tcpSocket: TCPSocketActionSchema.optional(),
    grpc: GRPCActionSchema.optional(),
    initialDelaySeconds: int.optional(),
    timeoutSeconds: int.optional(),
    periodSeconds: int.optional(),
    successThreshold: int.optional(),
    failureThreshold: int.optional(),
    terminationGracePeriodSeconds: ptr(int),
  }),
);

const LifecycleHandlerSchema = z.looseObject({
  exec: ExecActionSchema.optional(),
  httpGet: HTTPGetActionSchema.optional(),
  tcpSocket: TCPSocketActionSchema.optional(),
  sleep: z.looseObject({ seconds: int }).optional(),
});
const LifecycleSchema = decodes<Lifecycle>()(
  z.looseObject({
    postStart: LifecycleHandlerSchema.optional(),
    preStop: LifecycleHandlerSchema.optional(),
  }),
);

// --- containers -----------------------------------------------------------

const ContainerPortSchema = decodes<ContainerPort>()(
  z.looseObject({
    name: str.optional(),
    hostPort: int.optional(),
    containerPort: int,
    protocol: str.optional(),
    hostIP: str.optional(),
  }),
);

const EnvVarSchema = decodes<EnvVar>()(
  z.looseObject({
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
  }),
);

/** Resource name → quantity string (e.g. `cpu: "100m"`). Numbers are accepted as YAML writes them. */
const ResourceListSchema = decodes<ResourceList>()(z.record(z.string(), z.union([str, z.number()]).transform(String)));

const ResourceRequirementsSchema = decodes<ResourceRequirements>()(
  z.looseObject({
    requests: ResourceListSchema.optional(),
    limits: ResourceListSchema.optional(),
  }),
);

const CapabilitiesSchema = z.looseObject({ add: z.array(str).optional(), drop: z.array(str).optional() });

const SecurityContextSchema = decodes<SecurityContext>()(
  z.looseObject({
    capabilities: CapabilitiesSchema.optional(),
    privileged: z.boolean().optional(),
    runAsUser: int.optional(),
    runAsGroup: int.optional(),
    runAsNonRoot: z.boolean().optional(),
    readOnlyRootFilesystem: z.boolean().optional(),
    allowPrivilegeEscalation: z.boolean().optional(),
    procMount: str.optional(),
    seccompProfile: z.looseObject({ type: str, localhostProfile: str.optional() }).optional(),
  }),
);

const VolumeMountSchema = z.looseObject({
  name: str,
  mountPath: str,
  readOnly: z.boolean().optional(),
  subPath: str.optional(),
  mountPropagation: str.optional(),
});

export const ContainerSchema = decodes<Container>()(
  z.looseObject({
    name: str,
    image: str.optional(),
    command: z.array(str).optional(),
    args: z.array(str).optional(),
    workingDir: str.optional(),
    ports: z.array(ContainerPortSchema).optional(),
    env: z.array(EnvVarSchema).optional(),
    envFrom: z
      .array(
        z.looseObject({
          prefix: str.optional(),
          configMapRef: z.looseObject({ name: str.optional(), optional: z.boolean().optional() }).optional(),
          secretRef: z.looseObject({ name: str.optional(), optional: z.boolean().optional() }).optional(),
        }),
      )
      .optional(),
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
  }),
);

// --- pod spec ---------------------------------------------------------------

const TolerationSchema = decodes<Toleration>()(
  z.looseObject({
    key: str.optional(),
    operator: str.optional(),
    value: str.optional(),
    effect: str.optional(),
    tolerationSeconds: ptr(int),
  }),
);

/** Volume: the name is modelled, the source (hostPath, emptyDir, ...) is kept as-is. */
const VolumeSchema = decodes<Volume>()(
  z.looseObject({
    name: str,
    hostPath: z.looseObject({ path: str, type: str.optional() }).optional(),
    emptyDir: z.looseObject({ medium: str.optional(), sizeLimit: str.optional() }).optional(),
  }),
);

const PodDNSConfigSchema = z.looseObject({
  nameservers: z.array(str).optional(),
  searches: z.array(str).optional(),
  options: z.array(z.looseObject({ name: str.optional(), value: str.optional() })).optional(),
});

const PodSecurityContextSchema = decodes<PodSecurityContext>()(
  z.looseObject({
    runAsUser: int.optional(),
    runAsGroup: int.optional(),
    runAsNonRoot: z.boolean().optional(),
    fsGroup: int.optional(),
    supplementalGroups: z.array(int).optional(),
    sysctls: z.array(z.looseObject({ name: str, value: str })).optional(),
    seccompProfile: z.looseObject({ type: str, localhostProfile: str.optional() }).optional(),
  }),
);

const PodSpecSchema = decodes<PodSpec>()(
  z.looseObject({
    /** Required by the model; absent decodes to empty, which validation rejects (as upstream's nil slice). */
    containers: z
      .array(ContainerSchema)
      .nullish()
      .transform((v) => v ?? []),
    initContainers: z.array(ContainerSchema).optional(),
    restartPolicy: str.optional(),
    terminationGracePeriodSeconds: ptr(int),
    activeDeadlineSeconds: ptr(int),
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
    priority: ptr(int),
    enableServiceLinks: z.boolean().optional(),
    runtimeClassName: ptr(str),
  }),
);

export const PodSchema = decodes<Pod>()(
  z.looseObject({
    apiVersion: str.optional(),
    kind: str.optional(),
    metadata: ObjectMetaSchema.prefault({}),
    spec: PodSpecSchema.prefault({}),
    status: PodStatusSchema.optional(),
  }),
);
/** A v1 Pod. `metadata` and `spec` are always present after parsing. */

export const PodListSchema = z.looseObject({
  apiVersion: str.optional(),
  kind: str.optional(),
  metadata: z.looseObject({ resourceVersion: str.optional() }).optional(),
  items: z
    .array(PodSchema)
    .nullish()
    .transform((v) => v ?? []),
});

/** Upstream kubecontainer.GetPodFullName: `<name>_<namespace>`. */
export function podFullName(pod: Pod): string {
  return `${pod.metadata.name ?? ''}_${pod.metadata.namespace ?? ''}`;
}
