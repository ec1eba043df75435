/**
 * What a sync just created goes into the pod's status cache entry, so the
 * relist that first lists it reuses it (inspection keeps a cached status whose
 * listed state is unchanged) instead of reading it again, and the status the
 * sync reports when it ends already shows it.
 *
 * Every entry written here is timestamped before the sync ends, so the pod's
 * next sync does not trust it (upstream GetNewerThan(lastSyncTime)), and is
 * written only while the slot holds nothing newer than the entry it builds on
 * (the status the sync started from, or this sync's previous write): an
 * inspection that ran meanwhile saw more and keeps its entry. Best effort: a
 * failed write or read changes nothing but the relist's work.
 */
import type { Clock } from '../../common/clock.js';
import type { CriApi } from '../../cri/client.js';
import { containerState, newestFirst, toContainerStatus } from '../../runtime/convert.js';
import type { ContainerStatus, PodStatus, SandboxStatus } from '../../runtime/types.js';
import type { PodStatusCache } from '../shared/pod-status-cache.js';

export interface PublishContext {
  cri: CriApi;
  cache: PodStatusCache;
  clock: Clock;
}

/** A container this sync created and started (its post-start hook, if any, passed). */
export interface StartedContainer {
  id: string;
  sandboxId: string;
}

function write(ctx: PublishContext, slot: number, base: PodStatus, next: PodStatus): PodStatus | undefined {
  try {
    return ctx.cache.write(slot, next, { ifNoNewerThan: base.timestamp }) ? next : undefined;
  } catch {
    // A full slot or one freed meanwhile: the relist's inspection reads the pod as usual.
    return undefined;
  }
}

/**
 * The sandbox this sync just created, with the status it read for the pod
 * IPs, on top of `base`. Returns the entry written (undefined: none).
 */
export function publishCreatedSandbox(ctx: PublishContext, slot: number, base: PodStatus, sandbox: SandboxStatus): PodStatus | undefined {
  if (slot < 0) return undefined;
  return write(ctx, slot, base, {
    ...base,
    ips: sandbox.ips,
    sandboxStatuses: [sandbox, ...base.sandboxStatuses],
    timestamp: ctx.clock.now(),
  });
}

/**
 * The containers this sync started, each read once with ContainerStatus, on
 * top of `base`. Only those read as running are written: one that already
 * exited is left to the relist, whose inspection adds its termination message.
 * A sync that killed anything must not call this (`base` would still show
 * what it stopped as running).
 */
export async function publishStartedContainers(
  ctx: PublishContext,
  slot: number,
  base: PodStatus,
  started: readonly StartedContainer[],
): Promise<void> {
  if (slot < 0 || started.length === 0) return;
  const timestamp = ctx.clock.now();
  const read = await Promise.all(
    started.map(({ id, sandboxId }) =>
      ctx.cri.containerStatus({ containerId: id }).then(
        (r): ContainerStatus | undefined =>
          r.status && containerState(r.status.state) === 'running' ? toContainerStatus(r.status, sandboxId) : undefined,
        () => undefined,
      ),
    ),
  );
  const running = read.filter((s): s is ContainerStatus => s !== undefined);
  if (running.length === 0) return;
  const ids = new Set(running.map((s) => s.id));
  const containerStatuses = [...running, ...base.containerStatuses.filter((s) => !ids.has(s.id))].sort(newestFirst);
  write(ctx, slot, base, { ...base, containerStatuses, timestamp });
}
