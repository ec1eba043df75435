/** What every start-up phase of the agent is given. */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import type { KubeletConfig } from '../config/kubelet-config.js';
import type { Shutdown } from './shutdown.js';

export interface AgentContext {
  config: KubeletConfig;
  logger: Logger;
  clock: Clock;
  /** Aborted when the agent stops: every loop, request and stream of the agent waits on it. */
  signal: AbortSignal;
  /** Where each phase registers the step that stops what it started. */
  shutdown: Shutdown;
}
