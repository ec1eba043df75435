/**
 * The invariants every fault is checked against, as pure functions of the
 * desired pods, the runtime's view (CRI lists) and the agent's /pods:
 * - every desired pod runs once: one ready sandbox and one running container
 *   per container name for a long-running pod (a second one is a duplicate,
 *   none is a lost pod until recovery ends);
 * - no terminated pod restarted: a run-once pod's container ran at most once
 *   and does not run again;
 * - no healthy container restarted: a long-running pod has no exited
 *   container, and every sandbox and container that ran when the fault hit
 *   (the baseline) still runs;
 * - /pods agrees with the runtime: each long pod Running with the running
 *   container's id for each container, each run-once pod Succeeded; for pods
 *   from the apiserver, the apiserver's statuses are checked the same way, each
 *   long pod's Ready condition True too;
 * - a pod the fault deleted (`gone`) has no ready sandbox and no running
 *   container, and its object has left the apiserver (the agent confirmed it).
 */
import type { Pod } from '../../src/api/pod.js';
import type { RuntimeView } from './runtime-view.js';
import { runtimePodName, type Workload } from './workload.js';

export interface Violations {
  /** Long pods without a ready sandbox or a running container for some name; run-once pods whose container never ran (yet). */
  lost: string[];
  /**
   * Run-once pods lost for good: their one start was cut off (the container exited without starting,
   * StartError) and restartPolicy Never does not retry it, so the pod ends Failed without having run,
   * as upstream's would. Counted as lost pods; final, so recovery does not wait for them.
   */
  onceStartCutOff: string[];
  duplicateSandboxes: string[];
  duplicateContainers: string[];
  healthyRestarted: string[];
  terminatedRestarted: string[];
  /**
   * Containers that never started beside the one that runs: left CREATED, or EXITED without a start
   * (containerd ends a container whose StartContainer was cancelled with StartError, exit 128). A
   * start cut off by the fault, not a restart of a healthy container: reported, not an invariant.
   */
  startsInterrupted: string[];
  /** Pods the fault deleted that still have a ready sandbox or a running container. */
  deletedRunning: string[];
}

/** Ids that ran when the fault hit: they must still run after it. */
export interface Baseline {
  /** Ready sandboxes and running containers: id → what it is (`sandbox of POD`, `POD/CONTAINER`) and its pod. */
  running: Map<string, { pod: string; what: string }>;
}

export function baselineOf(view: RuntimeView): Baseline {
  return {
    running: new Map([
      ...view.sandboxes
        .filter((s) => s.ready)
        .map((s): [string, { pod: string; what: string }] => [s.id, { pod: s.pod, what: `sandbox of ${s.pod}` }]),
      ...view.containers
        .filter((c) => c.running)
        .map((c): [string, { pod: string; what: string }] => [c.id, { pod: c.pod, what: `${c.pod}/${c.name}` }]),
    ]),
  };
}

/**
 * `ranPerPods`: run-once pods that /pods shows Succeeded with every container terminated with exit code 0.
 * Such a pod with nothing left in the runtime is not lost: its dead containers and sandbox were
 * garbage-collected after it ran (the eviction manager does so under disk pressure, as upstream's).
 */
export function checkRuntime(
  workload: Workload,
  node: string,
  view: RuntimeView,
  baseline?: Baseline,
  ranPerPods?: ReadonlySet<string>,
): Violations {
  const v: Violations = {
    lost: [],
    onceStartCutOff: [],
    duplicateSandboxes: [],
    duplicateContainers: [],
    healthyRestarted: [],
    terminatedRestarted: [],
    startsInterrupted: [],
    deletedRunning: [],
  };
  const boxesOf = group(view.sandboxes, (s) => s.pod);
  const containersOf = group(view.containers, (c) => `${c.pod}/${c.name}`);
  const wanted = new Set<string>();
  for (const pod of workload.pods) {
    const full = runtimePodName(workload, pod.name, node);
    wanted.add(full);
    const boxes = boxesOf.get(full) ?? [];
    if (pod.kind === 'gone') {
      const ready = boxes.filter((b) => b.ready).length;
      const running = view.containers.filter((c) => c.pod === full && c.running).length;
      if (ready + running > 0) v.deletedRunning.push(`${full}: deleted, ${ready} ready sandbox(es), ${running} running container(s)`);
      continue;
    }
    if (pod.kind === 'long') {
      const ready = boxes.filter((b) => b.ready).length;
      if (ready > 1) v.duplicateSandboxes.push(`${full}: ${ready} ready sandboxes`);
      let lost = ready === 0;
      for (const name of pod.containers) {
        const cs = containersOf.get(`${full}/${name}`) ?? [];
        const running = cs.filter((c) => c.running).length;
        if (running > 1) v.duplicateContainers.push(`${full}/${name}: ${running} running`);
        if (running === 0) lost = true;
        const exited = cs.filter((c) => c.state === 'exited' && !c.neverStarted).length;
        if (exited > 0) v.healthyRestarted.push(`${full}/${name}: ${exited} exited container(s)`);
        const never = cs.filter((c) => c.neverStarted);
        if (never.length > 0)
          v.startsInterrupted.push(`${full}/${name}: ${never.length} never started (${never.map((c) => c.state).join(', ')})`);
      }
      if (lost) v.lost.push(full);
    } else {
      const cs = containersOf.get(`${full}/${pod.containers[0]}`) ?? [];
      const ran = cs.filter((c) => (c.state === 'exited' || c.state === 'running') && !c.neverStarted).length;
      if (ran > 1) v.terminatedRestarted.push(`${full}: its container ran ${ran} times`);
      const removedAfterRun = cs.length === 0 && !boxesOf.has(full) && ranPerPods?.has(full) === true;
      if (ran === 0 && !removedAfterRun) (cs.some((c) => c.state === 'exited' && c.neverStarted) ? v.onceStartCutOff : v.lost).push(full);
    }
  }
  if (baseline) {
    const live = new Set([
      ...view.sandboxes.filter((s) => s.ready).map((s) => s.id),
      ...view.containers.filter((c) => c.running).map((c) => c.id),
    ]);
    const ends = new Set(workload.pods.filter((p) => p.kind !== 'long').map((p) => runtimePodName(workload, p.name, node)));
    for (const [id, k] of baseline.running) {
      // A run-once pod's container ends by itself, and its sandbox is stopped after it; a deleted pod's are stopped.
      if (live.has(id) || ends.has(k.pod)) continue;
      v.healthyRestarted.push(`${k.what} (${id.slice(0, 12)}) ran when the fault hit and does not now`);
    }
  }
  for (const s of view.sandboxes) if (!wanted.has(s.pod)) v.duplicateSandboxes.push(`${s.pod}: a sandbox of no desired pod`);
  return v;
}

/** Pods whose /pods status disagrees with the runtime (empty when consistent). */
export function checkStatuses(workload: Workload, node: string, view: RuntimeView, pods: Pod[]): string[] {
  const byName = new Map(pods.map((p) => [p.metadata?.name ?? '', p]));
  const running = new Map(view.containers.filter((c) => c.running).map((c) => [`${c.pod}/${c.name}`, c.id]));
  const bad: string[] = [];
  for (const pod of workload.pods) {
    const full = runtimePodName(workload, pod.name, node);
    const p = byName.get(full);
    if (pod.kind === 'gone') {
      if (p && workload.source === 'api') bad.push(`${full}: deleted, still in the apiserver (phase ${p.status?.phase})`);
      continue;
    }
    if (!p) {
      bad.push(`${full}: not in /pods`);
      continue;
    }
    const phase = p.status?.phase;
    if (pod.kind === 'once') {
      const cutOff = view.containers.some((c) => c.pod === full && c.state === 'exited' && c.neverStarted);
      const want = cutOff && !view.containers.some((c) => c.pod === full && !c.neverStarted) ? 'Failed' : 'Succeeded';
      if (phase !== want) bad.push(`${full}: phase ${phase}, want ${want}`);
      continue;
    }
    if (phase !== 'Running') {
      bad.push(`${full}: phase ${phase}, want Running`);
      continue;
    }
    const ready = p.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    if (workload.source === 'api' && ready !== 'True') bad.push(`${full}: Ready ${ready ?? 'missing'}, want True`);
    for (const name of pod.containers) {
      const cs = p.status?.containerStatuses?.find((c) => c.name === name);
      const id = running.get(`${full}/${name}`);
      if (!cs?.state?.running || !id || !cs.containerID?.endsWith(`://${id}`))
        bad.push(`${full}/${name}: /pods ${cs?.containerID ?? 'none'}, runtime ${id ?? 'none'}`);
    }
  }
  return bad;
}

/**
 * Long pods' containers whose /pods restartCount is above 0 with no exited container of that name in
 * the runtime (an exited one is already a healthy container restarted). One whose only other container
 * never started (left CREATED, or ended with StartError by a cancelled StartContainer) is not a restart
 * of a healthy container: upstream counts it too (startContainer takes the latest container's restart
 * count + 1), so it goes to `bumped`, reported beside it.
 */
export function restartsInPods(
  workload: Workload,
  node: string,
  view: RuntimeView,
  pods: Pod[],
): { restarted: string[]; bumped: string[] } {
  const long = new Set(workload.pods.filter((p) => p.kind === 'long').map((p) => runtimePodName(workload, p.name, node)));
  const states = group(view.containers, (c) => `${c.pod}/${c.name}`);
  const restarted: string[] = [];
  const bumped: string[] = [];
  for (const p of pods) {
    const name = p.metadata?.name ?? '';
    if (!long.has(name)) continue;
    for (const c of p.status?.containerStatuses ?? []) {
      if (c.restartCount === 0) continue;
      const others = states.get(`${name}/${c.name}`) ?? [];
      if (others.some((x) => x.state === 'exited' && !x.neverStarted)) continue;
      (others.some((x) => x.neverStarted) ? bumped : restarted).push(`${name}/${c.name}: restartCount ${c.restartCount}`);
    }
  }
  return { restarted, bumped };
}

export function countViolations(v: Violations): {
  lost: number;
  duplicates: number;
  healthyRestarted: number;
  terminatedRestarted: number;
  deletedRunning: number;
} {
  return {
    lost: v.lost.length + v.onceStartCutOff.length,
    duplicates: v.duplicateSandboxes.length + v.duplicateContainers.length,
    healthyRestarted: v.healthyRestarted.length,
    terminatedRestarted: v.terminatedRestarted.length,
    deletedRunning: v.deletedRunning.length,
  };
}

function group<T>(items: T[], key: (t: T) => string): Map<string, T[]> {
  const m = new Map<string, T[]>();
  for (const i of items) {
    const k = key(i);
    const list = m.get(k);
    if (list) list.push(i);
    else m.set(k, [i]);
  }
  return m;
}

/** The run-once pods /pods shows Succeeded with every container terminated with exit code 0 (checkRuntime's ranPerPods). */
export function ranPerPods(pods: Pod[]): Set<string> {
  return new Set(
    pods
      .filter(
        (p) =>
          p.status?.phase === 'Succeeded' &&
          (p.status.containerStatuses?.length ?? 0) > 0 &&
          p.status.containerStatuses!.every((c) => c.state?.terminated?.exitCode === 0),
      )
      .map((p) => p.metadata?.name ?? ''),
  );
}
