/**
 * The grpc probe (upstream pkg/probe/grpc, since v1.23, GA in v1.27; v1.20 has
 * exec, httpGet and tcpSocket probes only): the standard health service
 * grpc.health.v1.Health/Check over plaintext, with the probe's timeout for
 * the connection and the call together. Any problem is a failure (as
 * grpc_health_probe), with upstream's messages; only SERVING succeeds.
 *
 * The two messages are tiny (HealthCheckRequest{service = 1},
 * HealthCheckResponse{status = 1}), so they are encoded here with the
 * protobuf wire helpers instead of generated code. grpc-js is loaded at the
 * first grpc probe: a prober thread without one never loads it.
 */
import type * as grpc from '@grpc/grpc-js';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { Clock } from '../common/clock.js';
import { UPSTREAM_MAJOR_MINOR } from '../common/upstream-version.js';
import { joinHostPort } from '../handlers/container-port.js';
import { goDuration } from '../common/go-duration.js';
import { GO_CODE_NAMES, GrpcStatus } from '../common/rpc-error.js';
import type { ProbeRun } from './tcp-probe.js';

const CHECK = '/grpc.health.v1.Health/Check';
const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

export function encodeHealthCheckRequest(service: string): Buffer {
  const w = new BinaryWriter();
  if (service) w.uint32((1 << 3) | 2).string(service);
  return Buffer.from(w.finish());
}

/** The status field of a HealthCheckResponse (0 = UNKNOWN when absent). */
export function decodeHealthCheckResponse(bytes: Uint8Array): number {
  const r = new BinaryReader(bytes);
  let status = 0;
  while (r.pos < r.len) {
    const [field, wireType] = r.tag();
    if (field === 1 && wireType === WireType.Varint) status = r.int32();
    else r.skip(wireType);
  }
  return status;
}

export async function doGrpcProbe(host: string, port: number, service: string, timeoutMs: number, clock: Clock): Promise<ProbeRun> {
  const addr = joinHostPort(host, port);
  const grpcJs = await import('@grpc/grpc-js');
  const deadline = new Date(clock.now() + timeoutMs);
  const client = new grpcJs.Client(addr, grpcJs.credentials.createInsecure(), {
    'grpc.primary_user_agent': `kube-probe/${UPSTREAM_MAJOR_MINOR}`,
  });
  try {
    const connected = await new Promise<Error | undefined>((resolve) => client.waitForReady(deadline, (err) => resolve(err ?? undefined)));
    if (connected) {
      return {
        outcome: 'failure',
        output: `timeout: failed to connect service ${JSON.stringify(addr)} within ${goDuration(timeoutMs)}: context deadline exceeded`,
      };
    }
    const answer = await new Promise<{ err?: grpc.ServiceError; status?: number }>((resolve) => {
      client.makeUnaryRequest(
        CHECK,
        (s: string) => encodeHealthCheckRequest(s),
        (b: Buffer) => decodeHealthCheckResponse(b),
        service,
        new grpcJs.Metadata(),
        { deadline },
        (err, status) => resolve(err ? { err } : { status: status ?? 0 }),
      );
    });
    if (answer.err) {
      const { details } = answer.err;
      const code: number = answer.err.code;
      if (code === GrpcStatus.UNIMPLEMENTED) {
        return {
          outcome: 'failure',
          output: `error: this server does not implement the grpc health protocol (grpc.health.v1.Health): ${details}`,
        };
      }
      if (code === GrpcStatus.DEADLINE_EXCEEDED) {
        return { outcome: 'failure', output: `timeout: health rpc did not complete within ${goDuration(timeoutMs)}` };
      }
      return {
        outcome: 'failure',
        output: `error: health rpc probe failed: rpc error: code = ${GO_CODE_NAMES[code] ?? code} desc = ${details}`,
      };
    }
    if (answer.status !== 1) {
      return {
        outcome: 'failure',
        output: `service unhealthy (responded with ${JSON.stringify(SERVING_STATUS[answer.status!] ?? String(answer.status))})`,
      };
    }
    return { outcome: 'success', output: 'service healthy' };
  } finally {
    client.close();
  }
}
