import { EndpointError } from '../common/errors.js';

/**
 * Parses a container runtime endpoint as the kubelet accepts it
 * (`--container-runtime-endpoint`): `unix:///abs/path.sock`, or a bare absolute
 * path, which upstream still accepts with a deprecation warning.
 * Returns the gRPC target string for grpc-js (`unix:/abs/path.sock` form is
 * accepted by grpc-js as `unix:///abs/path`).
 */
export interface ParsedEndpoint {
  /** The original endpoint string. */
  endpoint: string;
  /** Absolute socket path. */
  socketPath: string;
  /** Target string for a grpc-js Client. */
  grpcTarget: string;
}

const UNIX_PREFIX = 'unix://';
/** sockaddr_un.sun_path is 108 bytes on Linux, including the terminating NUL. */
const MAX_SOCKET_PATH = 107;

export function parseEndpoint(endpoint: string): ParsedEndpoint {
  const trimmed = endpoint.trim();
  if (trimmed === '') {
    throw new EndpointError(
      'container runtime endpoint is empty; set --container-runtime-endpoint (e.g. unix:///run/containerd/containerd.sock)',
    );
  }
  let socketPath: string;
  if (trimmed.startsWith(UNIX_PREFIX)) {
    socketPath = trimmed.slice(UNIX_PREFIX.length);
  } else if (trimmed.startsWith('/')) {
    socketPath = trimmed;
  } else {
    const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(trimmed)?.[1];
    throw new EndpointError(
      scheme
        ? `container runtime endpoint "${endpoint}": protocol "${scheme}" not supported; only unix:// endpoints are`
        : `container runtime endpoint "${endpoint}" is not a unix:// URL or an absolute socket path`,
    );
  }
  if (!socketPath.startsWith('/')) {
    throw new EndpointError(`container runtime endpoint "${endpoint}": the socket path must be absolute (unix:///path/to.sock)`);
  }
  if (Buffer.byteLength(socketPath) > MAX_SOCKET_PATH) {
    throw new EndpointError(
      `container runtime endpoint "${endpoint}": socket path is longer than ${MAX_SOCKET_PATH} bytes, which unix sockets cannot bind or connect to`,
    );
  }
  return { endpoint: trimmed, socketPath, grpcTarget: `unix://${socketPath}` };
}
