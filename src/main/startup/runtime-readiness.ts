/**
 * Waits for the container runtime to answer Version at start-up, retrying
 * with capped exponential backoff and logging each failure (what, where, why).
 */
import type { Logger } from 'pino';
import type { Clock } from '../../common/clock.js';
import type { CriClient } from '../../cri/client.js';
import type { VersionResponse } from '../../gen/runtime/v1/api.js';
import { errorMessage } from '../../common/error-message.js';

export async function waitForRuntime(cri: CriClient, clock: Clock, logger: Logger, signal: AbortSignal): Promise<VersionResponse> {
  let delay = 100;
  for (let attempt = 1; ; attempt++) {
    try {
      const v = await cri.version({ version: 'v1' }, { timeoutMs: 10_000, signal });
      logger.info(
        { endpoint: cri.runtimeEndpoint, runtimeName: v.runtimeName, runtimeVersion: v.runtimeVersion, apiVersion: v.runtimeApiVersion },
        'Connected to the container runtime',
      );
      return v;
    } catch (err) {
      if (signal.aborted) throw err;
      logger.error(
        { endpoint: cri.runtimeEndpoint, attempt, retryInMs: delay, err: errorMessage(err) },
        'Container runtime is not reachable; retrying (check --container-runtime-endpoint and that the runtime is running)',
      );
      await clock.sleep(delay, signal);
      delay = Math.min(delay * 2, 5000);
    }
  }
}
