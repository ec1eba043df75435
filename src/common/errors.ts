/**
 * One error base class for the whole project. Every subclass has a stable
 * `code` (KTS_*) that logs, events and tests match on; messages that reach
 * users say what was wrong, where, and what to do.
 *
 * Add a code here and to ERROR_CODES together: test/unit/errors.test.ts checks
 * that every exported class has a unique, listed code.
 */
export class KubeletTsError extends Error {
  readonly code: string = 'KTS_ERR';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** A CRI call failed. `grpcCode` is the gRPC status code (0–16), `operation` the RPC name. */
export class CriError extends KubeletTsError {
  override readonly code: string = 'KTS_ERR_CRI';
  constructor(
    message: string,
    readonly operation: string,
    readonly grpcCode: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The runtime does not know the sandbox, container or image named in the call. */
export class CriNotFoundError extends CriError {
  override readonly code = 'KTS_ERR_CRI_NOT_FOUND';
}

/** The runtime cannot be reached or reported itself unavailable. Retry with backoff. */
export class CriUnavailableError extends CriError {
  override readonly code = 'KTS_ERR_CRI_UNAVAILABLE';
}

/** The call did not finish within its deadline (runtimeRequestTimeout). */
export class CriDeadlineError extends CriError {
  override readonly code = 'KTS_ERR_CRI_DEADLINE';
}

/** The runtime rejected the request as malformed or out of range. */
export class CriInvalidArgumentError extends CriError {
  override readonly code = 'KTS_ERR_CRI_INVALID_ARGUMENT';
}

/** A malformed container runtime endpoint (flag or config). */
export class EndpointError extends KubeletTsError {
  override readonly code = 'KTS_ERR_ENDPOINT';
}

/** Configuration (flags or KubeletConfiguration file) is invalid. */
export class ConfigError extends KubeletTsError {
  override readonly code = 'KTS_ERR_CONFIG';
}

/** A pod manifest (file or URL source) could not be parsed or failed validation. */
export class ManifestError extends KubeletTsError {
  override readonly code = 'KTS_ERR_MANIFEST';
}

/** A fixed-capacity shared-memory structure is full or a record does not fit its slot. */
export class CapacityError extends KubeletTsError {
  override readonly code = 'KTS_ERR_CAPACITY';
}

/** A worker thread died while running a task; the task may be retried. */
export class WorkerCrashedError extends KubeletTsError {
  override readonly code = 'KTS_ERR_WORKER_CRASHED';
}

/** The apiserver answered a request with an error status (4xx/5xx). `status` is the HTTP code, `reason` the Status reason. */
export class ApiStatusError extends KubeletTsError {
  override readonly code = 'KTS_ERR_API_STATUS';
  constructor(
    message: string,
    readonly status: number,
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The apiserver could not be reached, the connection failed, or the request timed out. Retry with backoff. */
export class ApiUnreachableError extends KubeletTsError {
  override readonly code = 'KTS_ERR_API_UNREACHABLE';
}

/** A mount or unmount command failed (the message carries the command and its output). */
export class MountError extends KubeletTsError {
  override readonly code = 'KTS_ERR_MOUNT';
}

/**
 * A pod's volume cannot be set up or used as specified (an unsupported source,
 * a missing apiserver, a subPath escaping its volume...). The message names the
 * pod, volume or container, and what to change.
 */
export class VolumeError extends KubeletTsError {
  override readonly code = 'KTS_ERR_VOLUME';
  /**
   * Upstream's operation and volume name for the event when they are not
   * "MountVolume.SetUp" of the pod's volume (a CSI MountDevice names the PV:
   * `MountVolume.MountDevice failed for volume "pv" : ...`).
   */
  readonly failed?: { operation: string; volume: string };
  constructor(message: string, options?: { cause?: unknown; failed?: { operation: string; volume: string } }) {
    super(message, options);
    if (options?.failed) this.failed = options.failed;
  }
}

/**
 * A container's subPath could not be set up (upstream makeMounts). `message`
 * is what the pod's status and events show: which volumeMount of which
 * container, and no host path (the pod's author must not learn the node's
 * file system from it). `detail` says what failed and where on the host; it
 * goes only to the agent's log.
 */
export class SubpathError extends KubeletTsError {
  override readonly code = 'KTS_ERR_SUBPATH';
  constructor(
    message: string,
    readonly detail: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A server could not listen on its address (typically a port in use); the message names the setting. */
export class ListenError extends KubeletTsError {
  override readonly code = 'KTS_ERR_LISTEN';
}

/**
 * A file system call failed. The message names what was being made or read,
 * the path, the call and path that failed and the errno; `path` is the path
 * asked for, `errno` the system error code (EROFS, ENOSPC...), `cause` the
 * system call's error.
 */
export class FileSystemError extends KubeletTsError {
  override readonly code = 'KTS_ERR_FS';
  constructor(
    message: string,
    readonly path: string,
    readonly errno: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/**
 * A pod sync whose only failures were containers in CrashLoopBackOff or
 * ImagePullBackOff: upstream's syncPod returns no error for these (the
 * BackOff event and the waiting reason say it), so the pod worker does not
 * log it as an error; it still retries after its error backoff.
 */
export class SyncBackoffError extends KubeletTsError {
  override readonly code = 'KTS_ERR_SYNC_BACKOFF';
}

/** Image garbage collection could not run or could not free what it wanted (image-gc-manager.ts). */
export class ImageGcError extends KubeletTsError {
  override readonly code = 'KTS_ERR_IMAGE_GC';
}

export const ERROR_CODES = {
  KubeletTsError: 'KTS_ERR',
  CriError: 'KTS_ERR_CRI',
  CriNotFoundError: 'KTS_ERR_CRI_NOT_FOUND',
  CriUnavailableError: 'KTS_ERR_CRI_UNAVAILABLE',
  CriDeadlineError: 'KTS_ERR_CRI_DEADLINE',
  CriInvalidArgumentError: 'KTS_ERR_CRI_INVALID_ARGUMENT',
  EndpointError: 'KTS_ERR_ENDPOINT',
  ConfigError: 'KTS_ERR_CONFIG',
  ManifestError: 'KTS_ERR_MANIFEST',
  CapacityError: 'KTS_ERR_CAPACITY',
  WorkerCrashedError: 'KTS_ERR_WORKER_CRASHED',
  ApiStatusError: 'KTS_ERR_API_STATUS',
  ApiUnreachableError: 'KTS_ERR_API_UNREACHABLE',
  MountError: 'KTS_ERR_MOUNT',
  VolumeError: 'KTS_ERR_VOLUME',
  SubpathError: 'KTS_ERR_SUBPATH',
  ListenError: 'KTS_ERR_LISTEN',
  FileSystemError: 'KTS_ERR_FS',
  SyncBackoffError: 'KTS_ERR_SYNC_BACKOFF',
  ImageGcError: 'KTS_ERR_IMAGE_GC',
} as const;
