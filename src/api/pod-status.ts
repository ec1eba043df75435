/**
 * v1 PodStatus and ContainerStatus shapes (k8s.io/api/core/v1). Every object
 * schema is loose: unknown fields are kept, so a pod read from a manifest or
 * the apiserver round-trips without loss. Timestamps stay RFC3339 strings.
 */
import { z } from 'zod';

const str = z.string();
const int = z.number().int();

export const PodPhaseSchema = z.enum(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']);
export type PodPhase = z.infer<typeof PodPhaseSchema>;

export const PodConditionSchema = z.looseObject({
  type: str,
  status: z.enum(['True', 'False', 'Unknown']),
  lastProbeTime: str.nullish(),
  lastTransitionTime: str.nullish(),
  reason: str.optional(),
  message: str.optional(),
});
export type PodCondition = z.infer<typeof PodConditionSchema>;

export const ContainerStateWaitingSchema = z.looseObject({ reason: str.optional(), message: str.optional() });
export const ContainerStateRunningSchema = z.looseObject({ startedAt: str.nullish() });
export const ContainerStateTerminatedSchema = z.looseObject({
  exitCode: int,
  signal: int.optional(),
  reason: str.optional(),
  message: str.optional(),
  startedAt: str.nullish(),
  finishedAt: str.nullish(),
  containerID: str.optional(),
});

export const ContainerStateSchema = z.looseObject({
  waiting: ContainerStateWaitingSchema.optional(),
  running: ContainerStateRunningSchema.optional(),
  terminated: ContainerStateTerminatedSchema.optional(),
});
export type ContainerStateV1 = z.infer<typeof ContainerStateSchema>;

export const ContainerStatusSchema = z.looseObject({
  name: str,
  state: ContainerStateSchema.optional(),
  lastState: ContainerStateSchema.optional(),
  ready: z.boolean(),
  restartCount: int,
  image: str,
  imageID: str,
  containerID: str.optional(),
  started: z.boolean().optional(),
});
export type ContainerStatusV1 = z.infer<typeof ContainerStatusSchema>;

export const PodIPSchema = z.looseObject({ ip: str });

export const PodStatusSchema = z.looseObject({
  phase: PodPhaseSchema.optional(),
  conditions: z.array(PodConditionSchema).optional(),
  message: str.optional(),
  reason: str.optional(),
  hostIP: str.optional(),
  podIP: str.optional(),
  podIPs: z.array(PodIPSchema).optional(),
  startTime: str.nullish(),
  containerStatuses: z.array(ContainerStatusSchema).optional(),
  initContainerStatuses: z.array(ContainerStatusSchema).optional(),
  qosClass: str.optional(),
});
export type PodStatus = z.infer<typeof PodStatusSchema>;
