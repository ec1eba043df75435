/**
 * systemd readiness (sd_notify READY=1) for `Type=notify` units: when
 * NOTIFY_SOCKET is set, the agent reports READY=1 once it runs, and
 * STOPPING=1 when it shuts down. Node cannot send on a unix datagram socket,
 * so the message goes through systemd's own `systemd-notify` with
 * `--pid=<agent pid>`; the unit needs `NotifyAccess=all` (docs/operations.md).
 * A failure is logged and changes nothing else. NOTIFY_SOCKET is the one
 * environment variable kubelet-ts reads.
 */
import { execFile } from 'node:child_process';
import type { Logger } from 'pino';
import { errorMessage } from '../common/error-message.js';

export type Exec = (file: string, args: string[], env: NodeJS.ProcessEnv) => Promise<void>;

const execNotify: Exec = (file, args, env) =>
  new Promise((resolve, reject) =>
    execFile(file, args, { env, timeout: 10_000 }, (err) => (err ? reject(new Error(err.message, { cause: err })) : resolve())),
  );

/** Sends `state` (e.g. READY=1) to systemd when run under a notify unit; resolves whether it was sent. */
export async function sdNotify(
  state: 'READY=1' | 'STOPPING=1',
  logger: Logger,
  env: NodeJS.ProcessEnv = process.env,
  exec: Exec = execNotify,
  pid = process.pid,
): Promise<boolean> {
  if (!env.NOTIFY_SOCKET) return false;
  const args = state === 'READY=1' ? ['--ready', `--pid=${pid}`] : [`--pid=${pid}`, state];
  try {
    await exec('systemd-notify', args, env);
    logger.info({ state, socket: env.NOTIFY_SOCKET }, 'Notified systemd');
    return true;
  } catch (err) {
    logger.warn({ state, err: errorMessage(err) }, 'Failed to notify systemd (systemd-notify); the unit needs NotifyAccess=all');
    return false;
  }
}
