/**
 * What crosses the thread boundary for container garbage collection: the
 * runtime's containers and sandboxes as the gcList task lists them, and what
 * the main thread asks the gcRemove task to remove (upstream
 * kuberuntime_gc.go). The selection is src/main/kubelet/container-gc-select.ts.
 */
export interface GcResult {
  containers: number;
  sandboxes: number;
  logDirectories: number;
  /** Failures (each step continues past them); the next run retries. */
  errors: string[];
}

export interface GcContainer {
  id: string;
  uid: string;
  name: string;
  sandboxId: string;
  running: boolean;
  /** ns */
  createdAt: bigint;
}

export interface GcSandbox {
  id: string;
  uid: string;
  ready: boolean;
  createdAt: bigint;
}

export interface GcRemoval {
  containers?: string[];
  sandboxes?: string[];
  /** Absolute paths of pod log directories. */
  logDirectories?: string[];
  /** Links in this directory go with their containers, and dangling ones of gone containers are removed. */
  containerLogsDir?: string;
}
