/** The startup benchmark's markdown report and CDF charts (bench/startup.bench.ts writes the JSON). */
import type { CpuWindow } from './cpu.js';

/** The machine when a timed phase started (waitQuiet). */
export interface Quiet {
  busy: number;
  waitedS: number;
}
import { runNote, writeStartupCdf } from './charts.js';
import type { ScenarioResult } from '../startup.bench.js';

export function markdown(results: ScenarioResult[], meta: Record<string, unknown>): string {
  const L: string[] = [];
  L.push('# Pod startup: agent vs raw CRI', '');
  L.push(`Machine: ${JSON.stringify(meta.machine)}`, '');
  L.push(
    'A batch of pods (1 container `sleep 3600` each) written as static-pod manifests before the agent starts (a node boot), ' +
      'vs the same sandboxes and containers created by a raw CRI script (`runRawPod`: RunPodSandbox + CreateContainer + StartContainer) in the same run. ' +
      'Agent wall = agent spawn → first `/pods` poll showing every pod Running with every container running; raw wall = batch start → last StartContainer returned. ' +
      "Per-pod: agent = `kubernetes.io/config.seen` → container CRI `started_at`; raw = batch start → that pod's StartContainer returned. " +
      '**Headline ratio = agent wall (from spawn) / raw wall at C=8** (the agent has no fixed CRI concurrency: up to 12 concurrent pod syncs over 2 worker threads, each SyncPod sequential; C=8 is the FACTS figure). ' +
      '"raw C=8, kubelet configs" makes the same three calls with the sandbox and container configs the kubelet generates for these pods ' +
      '(seccomp RuntimeDefault for the pause container as upstream, DNS from the node, labels, annotations, linux resources), without the files it writes or its reads; ' +
      '"raw C=8, kubelet work" adds the rest of what a kubelet must do to start each pod and learn that it runs, with the agent\'s own functions ' +
      '(pod directories, PodSandboxStatus, the image check (ImageStatus unless the batch found the image present moments ago, as the agent does), ' +
      'the restart count from the log directory, hosts and termination-message files, the log link, one ContainerStatus: five calls per pod) and nothing around it (no process start, manifests, PLEG or status); ' +
      'the last columns are agent / those runs.',
    '',
  );
  L.push(
    '| runtime | pods | path | wall to all Running (s) | per-pod p50 (ms) | per-pod p99 (ms) | agent / raw C=8 | agent / raw C=8, kubelet configs | agent / raw C=8, kubelet work |',
  );
  L.push('|---|---:|---|---:|---:|---:|---:|---:|---:|');
  for (const r of results) {
    for (const x of r.raw) L.push(`| ${r.runtime} | ${r.pods} | ${x.path} | ${x.wallS} | ${x.perPodP50Ms} | ${x.perPodP99Ms} | | | |`);
    const a = r.agent;
    const k = r.ratioVsRawC8KubeletConfigs ?? '';
    const w = r.ratioVsRawC8KubeletWork ?? '';
    L.push(
      `| ${r.runtime} | ${r.pods} | agent (from spawn) | ${a.wallS} | ${a.perPodP50Ms} | ${a.perPodP99Ms} | **${r.ratioVsRawC8}** | ${k} | ${w} |`,
    );
    L.push(`| ${r.runtime} | ${r.pods} | agent (from /healthz) | ${a.wallFromHealthzS} | | | ${r.ratioFromHealthzVsRawC8} | | |`);
    L.push(
      `| ${r.runtime} | ${r.pods} | agent (from first config.seen) | ${a.wallFromFirstSeenS} | | | ${r.ratioFromFirstSeenVsRawC8} | | |`,
    );
  }
  L.push('');
  L.push('## Agent timeline (s after spawn)', '');
  L.push(
    '| runtime | pods | /healthz | first config.seen | first sandbox created (CRI) | last container started (CRI) | all Running in /pods | status lag (last started → all Running) | /pods poll (ms) | per-pod status lag p50 / p99 / max (ms) | pods that showed a restart |',
  );
  L.push('|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|');
  for (const r of results) {
    const a = r.agent;
    const lag = a.podStatusLagMs ? `${a.podStatusLagMs.p50} / ${a.podStatusLagMs.p99} / ${a.podStatusLagMs.max}` : '';
    L.push(
      `| ${r.runtime} | ${r.pods} | ${a.healthzS} | ${a.firstSeenS} | ${a.firstSandboxS} | ${a.lastStartedS} | ${a.wallS} | ${a.statusLagS} | ${a.pollIntervalMs} | ${lag} | ${a.restartedPods ?? ''} |`,
    );
  }
  L.push('');
  L.push('## Per-pod breakdown (ms)', '');
  L.push(
    "| runtime | pods | path | seen→sandbox created p50 / p99 | sandbox created→container started p50 / p99 | one pod's own CRI calls p50 / p99 |",
  );
  L.push('|---|---:|---|---|---|---|');
  for (const r of results) {
    for (const x of r.raw) L.push(`| ${r.runtime} | ${r.pods} | ${x.path} | | | ${x.servicePodP50Ms} / ${x.servicePodP99Ms} |`);
    const a = r.agent;
    L.push(
      `| ${r.runtime} | ${r.pods} | agent | ${a.seenToSandboxP50Ms} / ${a.seenToSandboxP99Ms} | ${a.sandboxToStartedP50Ms} / ${a.sandboxToStartedP99Ms} | |`,
    );
  }
  L.push('');
  L.push('## CPU seconds during the timed window', '');
  L.push(
    'Machine = busy CPU-seconds of all cores (/proc/stat; 2 cores ⇒ at most 2 s per s), so it includes other load on the machine. ' +
      'Runtime = the containerd daemon or the sim process (containerd shims/runc are not in it, but are in Machine). Agent counts from /healthz; “agent from spawn” is the agent process’s whole CPU at all Running (its boot included), and its main thread’s alone. Bench = this process (CRI client, /pods polling). ' +
      'Before = the machine when the phase started: every timed phase waits until the machine is under 15 % busy over 5 s (up to 5 min), ' +
      'since the kernel and the shims go on tearing down the previous batch after its pods are removed. ' +
      'Top processes: a process reaped in the window brings its whole life’s CPU to its reaper (PID 1 here, process_api), so that column mixes in earlier work.',
    '',
  );
  L.push(
    '| runtime | pods | path | before: busy (waited s) | window (s) | machine busy | runtime | agent | agent from spawn: all threads / main thread | bench | top processes (CPU-s, incl. reaped children) |',
  );
  L.push('|---|---:|---|---:|---:|---:|---:|---:|---|---:|---|');
  const before = (q: Quiet | undefined) => (q ? `${q.busy} (${q.waitedS})` : '');
  const top = (c: CpuWindow) =>
    Object.entries(c.byCommand ?? {})
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
  for (const r of results) {
    for (const x of r.raw)
      L.push(
        `| ${r.runtime} | ${r.pods} | ${x.path} | ${before(x.quiet)} | ${x.wallS} | ${x.cpu.machineBusyS} | ${x.cpu.runtimeS} | | | ${x.cpu.selfS} | ${top(x.cpu)} |`,
      );
    const c = r.agent.cpu;
    L.push(
      `| ${r.runtime} | ${r.pods} | agent | ${before(r.agent.quiet)} | ${r.agent.wallS} | ${c.machineBusyS} | ${c.runtimeS} | ${c.agentS} | ${c.agentFromSpawnS ?? ''} / ${c.agentMainFromSpawnS ?? ''} | ${c.selfS} | ${top(c)} |`,
    );
  }
  L.push('');
  L.push('## kubelet_pod_worker_duration_seconds (agent)', '');
  L.push('p50/p99 are bucket-interpolated (histogram_quantile), DEF_BUCKETS.', '');
  L.push('| runtime | pods | operation_type | count | sum (s) | mean (ms) | p50 (ms) | p99 (ms) |');
  L.push('|---|---:|---|---:|---:|---:|---:|---:|');
  for (const r of results) {
    const h = r.agent.podWorkerDuration;
    if (Object.keys(h).length === 0) L.push(`| ${r.runtime} | ${r.pods} | (metric absent) | | | | | |`);
    for (const [op, s] of Object.entries(h))
      L.push(`| ${r.runtime} | ${r.pods} | ${op} | ${s.count} | ${s.sumS} | ${s.meanMs} | ${s.p50Ms} | ${s.p99Ms} |`);
  }
  L.push('');
  L.push('## kubelet_runtime_operations_duration_seconds (agent)', '');
  L.push('| runtime | pods | operation_type | count | mean (ms) | p50 (ms) | p99 (ms) |');
  L.push('|---|---:|---|---:|---:|---:|---:|');
  for (const r of results) {
    for (const [op, s] of Object.entries(r.agent.runtimeOps))
      L.push(`| ${r.runtime} | ${r.pods} | ${op} | ${s.count} | ${s.meanMs} | ${s.p50Ms} | ${s.p99Ms} |`);
  }
  L.push('');
  for (const r of results) {
    if (Object.keys(r.agent.pleg).length) {
      L.push(
        `PLEG/pod-start histograms (${r.runtime}): ${Object.entries(r.agent.pleg)
          .map(([k, v]) => `${k} ${JSON.stringify(v[''] ?? v)}`)
          .join('; ')}`,
        '',
      );
    }
    if (r.agent.notes.length) L.push(`Notes (${r.runtime}): ${r.agent.notes.join('; ')}`, '');
  }
  L.push(`Run: \`${String(meta.command)}\``);
  return L.join('\n');
}

/** startup-cdf-<runtime>.svg per scenario: per-pod start-up CDF of each raw concurrency and of the agent. */
export function writeStartupCharts(results: readonly ScenarioResult[], out: string, machine: { date?: string; loadavg?: number[] }): void {
  for (const r of results) {
    if (!r.agent.perPodMs) continue; // results from before per-pod times were kept
    writeStartupCdf(
      `${out}-cdf-${r.runtime}.svg`,
      `Pod start-up CDF: ${r.pods} pods on ${r.runtime}, agent vs raw CRI`,
      `agent: config.seen → container started_at; raw: batch start → StartContainer returned; ${runNote(machine)}`,
      [...r.raw.map((x) => ({ name: x.path, values: x.perPodMs })), { name: 'kubelet-ts agent', values: r.agent.perPodMs }],
    );
  }
}
