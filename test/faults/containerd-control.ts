/** A PrivateContainerd as the RuntimeControl of a containerd fault: SIGKILL, wait until gone, start again. */
import { pidAlive } from '../../src/common/pid-file.js';
import { pollUntil } from '../helpers/poll.js';
import type { PrivateContainerd } from '../helpers/private-containerd.js';
import type { RuntimeControl } from './fault.js';

export function containerdControl(containerd: PrivateContainerd): RuntimeControl {
  return {
    endpoint: containerd.endpoint,
    kill: async () => {
      const pid = containerd.stop('SIGKILL');
      await pollUntil(`containerd (pid ${pid}) to be gone`, () => !pidAlive(pid), { timeoutMs: 30_000 });
    },
    start: async () => {
      await containerd.up();
    },
  };
}
