/**
 * The bin's `run` command: refuses what cannot run, applies the process
 * settings (swap check, OOM score), starts the agent, tells systemd, and
 * stops it on SIGINT/SIGTERM.
 */
import type { Logger } from 'pino';
import type { KubeletConfig } from './config/kubelet-config.js';
import type { ConfigSources } from './config/load-config.js';
import { startAgent, type AgentHandle } from './agent.js';
import { applyOomScoreAdj, swapProblem } from './node/process-setup.js';
import { sdNotify } from './sd-notify.js';
import { unsupportedSettings, warnIgnoredSettings } from './unsupported.js';
import { errorMessage } from '../common/error-message.js';

export async function runAgent(config: KubeletConfig, logger: Logger, sources?: ConfigSources): Promise<number> {
  const problems = unsupportedSettings(config);
  if (problems.length) {
    for (const p of problems) logger.error(p);
    return 1;
  }
  const swap = swapProblem(config.failSwapOn);
  if (swap) {
    logger.error(swap);
    return 1;
  }
  applyOomScoreAdj(config.oomScoreAdj, logger);
  warnIgnoredSettings(config, logger);
  let agent: AgentHandle;
  try {
    agent = await startAgent(config, logger, { sources });
  } catch (err) {
    // A clear line, not a stack trace (a port in use, an unreadable certificate, ...); the stack at --v=4.
    logger.error({ err: errorMessage(err) }, 'Failed to start kubelet-ts');
    logger.debug({ stack: (err as Error).stack }, 'Start failure');
    return 1;
  }
  const stopping = new Promise<void>((resolveSignal) => {
    process.once('SIGINT', resolveSignal);
    process.once('SIGTERM', resolveSignal);
  });
  await sdNotify('READY=1', logger);
  await stopping;
  logger.info('Shutting down');
  await sdNotify('STOPPING=1', logger);
  await agent.stop();
  return 0;
}
