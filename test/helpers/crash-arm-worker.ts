/** A worker thread for test/unit/crash-arm.test.ts: one task under an armed crash; posts its result if it lives. */
import { parentPort, workerData } from 'node:worker_threads';
import { CrashArm, crashable } from '../../src/shared/crash-arm.js';

const arm = CrashArm.attach((workerData as { arm: SharedArrayBuffer }).arm);
void crashable(arm, 'syncPod', new Promise((r) => setTimeout(() => r('result'), 30))).then(
  (v) => parentPort!.postMessage(v),
  () => undefined,
);
