/**
 * v1 PodStatus and ContainerStatus: the types are the client-node models
 * (core-v1.ts); the zod schemas decode a status found in untrusted input (a
 * static pod manifest) and are checked at compile time to produce those types.
 * Every object schema is loose: unknown fields are kept, so a decoded pod
 * round-trips without loss. Timestamps stay RFC3339 strings (or null).
 */
import { z } from 'zod';
import type { ContainerState, ContainerStatus, PodCondition, PodPhase, PodStatus } from './core-v1.js';
import { decodes } from './decodes.js';

export type { ContainerState, ContainerStatus, PodCondition, PodPhase, PodStatus } from './core-v1.js';
/** Aliases that keep apart the v1 types and the runtime's ContainerStatus/ContainerState. */
export type ContainerStatusV1 = ContainerStatus;
export type ContainerStateV1 = ContainerState;

const str = z.string();
const int = z.number().int();
/** A metav1.Time: an RFC3339 string, or null for the zero time. */
const time = str.nullish();

const PodPhaseSchema = decodes<PodPhase>()(z.enum(['Pending', 'Running', 'Succeeded', 'Failed', 'Unknown']));

const PodConditionSchema = decodes<PodCondition>()(
  z.looseObject({
    type: str,
    status: z.enum(['True', 'False', 'Unknown']),
    lastProbeTime: time,
    lastTransitionTime: time,
    reason: str.optional(),
    message: str.optional(),
  }),
);

const ContainerStateWaitingSchema = z.looseObject({ reason: str.optional(), message: str.optional() });
const ContainerStateRunningSchema = z.looseObject({ startedAt: time });
const ContainerStateTerminatedSchema = z.looseObject({
  exitCode: int,
  signal: int.optional(),
  reason: str.optional(),
  message: str.optional(),
  startedAt: time,
  finishedAt: time,
  containerID: str.optional(),
});

const ContainerStateSchema = decodes<ContainerState>()(
  z.looseObject({
    waiting: ContainerStateWaitingSchema.optional(),
    running: ContainerStateRunningSchema.optional(),
    terminated: ContainerStateTerminatedSchema.optional(),
  }),
);

const ContainerStatusSchema = decodes<ContainerStatus>()(
  z.looseObject({
    name: str,
    state: ContainerStateSchema.optional(),
    lastState: ContainerStateSchema.optional(),
    ready: z.boolean(),
    restartCount: int,
    image: str,
    imageID: str,
    containerID: str.optional(),
    started: z.boolean().optional(),
  }),
);

const PodIPSchema = z.looseObject({ ip: str });

export const PodStatusSchema = decodes<PodStatus>()(
  z.looseObject({
    phase: PodPhaseSchema.optional(),
    conditions: z.array(PodConditionSchema).optional(),
    message: str.optional(),
    reason: str.optional(),
    hostIP: str.optional(),
    podIP: str.optional(),
    podIPs: z.array(PodIPSchema).optional(),
    startTime: time,
    containerStatuses: z.array(ContainerStatusSchema).optional(),
    initContainerStatuses: z.array(ContainerStatusSchema).optional(),
    qosClass: str.optional(),
  }),
);
