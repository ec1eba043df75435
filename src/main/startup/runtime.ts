/**
 * Start-up phase 2: the container runtime (the embedded simulator when the
 * endpoint is "sim"), the shared-memory state, the CRI client, the wait for
 * the runtime to answer, and the worker pool; then the start line.
 */
import type { Registry } from 'prom-client';
import { CriClient } from '../../cri/client.js';
import type { VersionResponse } from '../../gen/runtime/v1/api.js';
import { createSharedState, type SharedState } from '../../shared/shared-state.js';
import { imagePullLimits } from '../../shared/image-pull-gate.js';
import { createTaskRunner, PoolRunner, type TaskRunner } from '../../workers/task-runner.js';
import { poolResourceLimits } from '../../workers/worker-limits.js';
import type { WorkerInit } from '../../shared/shared-state.js';
import { RUNTIME_OPS_DURATION, RUNTIME_OPS_ERRORS, RUNTIME_OPS_TOTAL, sharedRuntimeObserver } from '../../shared/worker-metrics.js';
import { configSummary } from '../config/config-summary.js';
import type { ConfigSources } from '../config/load-config.js';
import { faultHookMode, installFaultHooks, simControlArgs } from './fault-hooks.js';
import { CrashArm } from '../../shared/crash-arm.js';
import { registerMetricBlock } from '../metrics/shared-collectors.js';
import { waitForRuntime } from './runtime-readiness.js';
import { packageVersion } from '../../common/version.js';
import type { AgentContext } from './context.js';

const HELP = {
  [RUNTIME_OPS_TOTAL]: 'Cumulative number of runtime operations by operation type.',
  [RUNTIME_OPS_ERRORS]: 'Cumulative number of runtime operation errors by operation type.',
  [RUNTIME_OPS_DURATION]: 'Duration in seconds of runtime operations. Broken down by operation type.',
};

export interface AgentRuntime {
  /** The endpoint the agent talks to (the embedded simulator's socket for "sim"). */
  runtimeEndpoint: string;
  runtimeVersion: VersionResponse;
  shared: SharedState;
  cri: CriClient;
  workerInit: WorkerInit;
  runner: TaskRunner;
}

export async function startRuntime(
  ctx: AgentContext,
  base: { rootDir: string; registry: Registry },
  sources: ConfigSources,
): Promise<AgentRuntime> {
  const { config, clock, logger, signal, shutdown } = ctx;
  let runtimeEndpoint = config.containerRuntimeEndpoint;
  let imageEndpoint = config.imageServiceEndpoint;
  const hooks = faultHookMode();
  if (runtimeEndpoint === 'sim') {
    // Loaded only for the simulator endpoint.
    const { startEmbeddedSim } = await import('./embedded-sim.js');
    const simLogger = logger.child({ component: 'sim' });
    const sim = await startEmbeddedSim(base.rootDir, clock, simLogger, simControlArgs(hooks, base.rootDir, simLogger));
    shutdown.add('embedded simulated runtime', () => sim.stop());
    runtimeEndpoint = sim.endpoint;
    if (imageEndpoint === 'sim') imageEndpoint = sim.endpoint;
  }

  const shared = createSharedState({ maxPods: config.maxPods, imagePulls: imagePullLimits(config), nowMs: clock.now() });
  registerMetricBlock(base.registry, shared.metrics, HELP);

  const cri = new CriClient({
    runtimeEndpoint,
    imageEndpoint,
    timeoutMs: config.runtimeRequestTimeout,
    observer: sharedRuntimeObserver(shared.metrics),
  });
  shutdown.add('CRI client', () => cri.close());
  const runtimeVersion = await waitForRuntime(cri, clock, logger.child({ component: 'runtime' }), signal);

  // Test-only (KTS_TEST_FAULT_HOOKS=relist|syncPod|inspect): a crash the hook arms for one task type.
  const crashArm = hooks && hooks !== 'all' ? CrashArm.create() : undefined;
  const workerInit = {
    ...shared.workerInit(runtimeEndpoint, { imageEndpoint, timeoutMs: config.runtimeRequestTimeout }),
    ...(crashArm ? { crashArm: crashArm.buffer } : {}),
  };
  const runner = createTaskRunner(workerInit, config.workerThreads, config.maxPods);
  shutdown.add('worker pool', () => runner.close());
  // Test-only (KTS_TEST_FAULT_HOOKS, the fault suite): SIGUSR2 terminates the pool's threads or arms a crash.
  const crashWorkers = async () => {
    const workers = runner instanceof PoolRunner ? runner.workers() : [];
    await Promise.all(workers.map((w) => w.terminate()));
    return workers.length;
  };
  const armCrash = (type: Parameters<CrashArm['arm']>[0]) => crashArm?.arm(type);
  const crashClaimedAt = (type: Parameters<CrashArm['arm']>[0]) => crashArm?.claimedAt(type);
  shutdown.add('test fault hooks', installFaultHooks({ crashWorkers, armCrash, crashClaimedAt }, logger, hooks));
  logger.info(
    {
      version: packageVersion(),
      runtime: `${runtimeVersion.runtimeName} ${runtimeVersion.runtimeVersion}`,
      runtimeEndpoint: config.containerRuntimeEndpoint,
      workerThreads: runner.threads,
      ...(runner.threads > 0 && { workerYoungGenerationMb: poolResourceLimits(config.maxPods).maxYoungGenerationSizeMb }),
      mode: config.kubeconfig ? 'cluster' : 'standalone',
      pleg: config.pleg,
      ...configSummary(config, sources),
    },
    'Starting kubelet-ts',
  );
  return { runtimeEndpoint, runtimeVersion, shared, cri, workerInit, runner };
}
